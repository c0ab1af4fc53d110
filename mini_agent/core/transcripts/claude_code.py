"""Read a Claude Code session JSONL file into message drafts (notebook 03_observation_masking).

Entries, one per line of ``~/.claude/projects/<proj>/<session>.jsonl``: ``{"type": "user" |
"assistant" | "system" | "progress" | ..., "uuid", "parentUuid", "isSidechain", "message"}``.
:func:`parse_jsonl` (the line reader) serves this kit's own session log as well.

* The history is the ``parentUuid`` chain from the last non-sidechain message entry back to
  a root; entries of the same API response that Claude Code wrote on side branches (parallel
  ``tool_use`` lines sharing one ``message.id``, and their ``tool_result`` lines) are brought
  back; a parent link that points outside the file ends the chain there (reported).
* ``isSidechain`` (sub-agent) entries and non-message entries (:data:`SKIPPED_ENTRY_TYPES`)
  are skipped and counted in ``info``; ``isMeta`` user entries are kept (Claude Code sends
  them to the model); ``<synthetic>`` assistant entries (written by the client, not the
  model) are dropped (reported); a truncated last line is ignored (reported).
* :func:`join_split_responses`: the lines of one ``message.id`` become ONE assistant message
  whose usage and time are the last line's.
* Each entry's ISO 8601 ``timestamp`` (``"2026-01-12T10:00:00.123Z"``) is its time.
* Compaction (``system``/``compact_boundary`` then an ``isCompactSummary`` user entry): with
  ``compaction="restart"`` the history starts at the summary, which is what the model saw
  after compacting; ``compaction="full"`` follows the boundary's ``logicalParentUuid`` and
  loads the pre-compaction history too, summary included.

Pure (text in, drafts out). Does not clean blocks, pair tool results or validate: that is
:mod:`.repair`, shared with the other formats.

Source:
    real Claude Code session files (``../shared/data/``) and their entry fields as listed
    above.
"""

from __future__ import annotations

import json
import operator
from typing import Any

from mini_agent.core.transcripts.drafts import (MessageDraft, TranscriptError, content_blocks,
                                                format_span, owned_blocks, seconds)
from mini_agent.core.transcripts.linear_chain import linear_chain
from mini_agent.core.transcripts.orjson_lines import LOADS, orjson_prefix, value_levels

SKIPPED_ENTRY_TYPES = ("progress", "system", "queue-operation", "file-history-snapshot", "pr-link")
"""Claude Code entry types that carry no API message (counted in ``info["skipped_entries"]``)."""

SYNTHETIC_MODEL = "<synthetic>"
"""``message.model`` of assistant entries Claude Code writes itself (errors, interruptions)."""


def parse_jsonl(text: str, repairs: list[str]) -> list[tuple[int, dict]]:
    """Read JSONL text into entries; bad lines are skipped and reported.

    Args:
        text: the file's text.
        repairs: the loader's repair log; a line that is not a JSON object (a truncated last
            line included) is named in it.

    Returns:
        ``(line_number, entry)`` pairs, line numbers 1-based.
    """
    # With orjson (:mod:`.orjson_lines`), the lines it reads as json.loads does are taken
    # from it: all of them when every line is an object it reads, whose values hold no float
    # that may be a long integer, and the plain scanner below reads a list nested as many
    # levels deep from this call depth (json.loads's limit is the recursion limit left).
    # The plain reader reads the rest, from the first line orjson did not take.
    entries: list[tuple[int, dict]] = []
    start, i = 0, 0  # the line's first character and its 0-based index
    if LOADS is not None:
        taken, rest, index = orjson_prefix(text)
        levels = value_levels([entry for _, entry in taken])
        if levels is not None and (not levels or _scan_object("[" * levels + "]" * levels,
                                                              0)[1] > 0):
            if rest < 0:
                return taken
            entries, start, i = taken, rest, index
    # The plain reader reads the lines in place: the usual line (one object starting at the
    # line's first character and ending at its newline) is scanned inside ``text`` itself,
    # with no split into line strings (``str.split`` walks the text character by character
    # and copies every line). From the first line that is not so on (its scan may have run
    # on past its newline: a value over several lines), every line is cut out and scanned
    # alone, as before, so that no scan reads past its own line twice. Each line reads as
    # ``json.loads`` reads it; ``tests/test_transcripts.py`` compares the two line by line.
    lines = None  # ``text.split("\n")``, made at the first bad line only
    last = None  # the index of the last non-blank line, found once, at the first bad line
    in_place = True  # no line has failed the in-place scan yet
    size = len(text)
    while True:
        newline = text.find("\n", start)
        stop = size if newline < 0 else newline
        if in_place and text.startswith("{", start):  # one object, no whitespace around
            entry, end = _scan_object(text, start)
            if end == stop:
                entries.append((i + 1, entry))
                if newline < 0:
                    break
                start, i = newline + 1, i + 1
                continue
            in_place = False
        line = text[start:stop]
        if line[:1] == "{" and not in_place:  # the usual line, scanned on its own
            entry, end = _scan_object(line, 0)
            if end == len(line):
                entries.append((i + 1, entry))
                line = ""
        if line.strip():
            if lines is None:
                lines = text.split("\n")
            last = _read_line(line, i, lines, last, entries, repairs)
        if newline < 0:
            break
        start, i = newline + 1, i + 1
    return entries


def _read_line(line: str, i: int, lines: list[str], last: int | None,
               entries: list[tuple[int, dict]], repairs: list[str]) -> int | None:
    """Read a non-blank line the fast scan did not take with ``json.loads``, as
    :func:`parse_jsonl` did line by line: append its entry, or its repair line; return
    ``last`` (the index of the last non-blank line, found at the first bad line)."""
    try:
        entry = json.loads(line)
    except RecursionError:
        repairs.append(f"line {i + 1}: JSON nested too deeply ({len(line)} chars) ignored")
        return last
    except ValueError as error:   # not JSON, or a number past Python's digit limit
        if last is None:
            last = next((n for n in range(len(lines) - 1, -1, -1) if lines[n].strip()), -1)
        what = ("truncated last line" if i == last and isinstance(error, json.JSONDecodeError)
                else "line is not valid JSON" if isinstance(error, json.JSONDecodeError)
                else "line holds a number too long to read")
        repairs.append(f"line {i + 1}: {what} ({len(line)} chars) ignored")
        return last
    if isinstance(entry, dict):
        entries.append((i + 1, entry))
    else:
        repairs.append(f"line {i + 1}: not a JSON object, ignored")
    return last


_SCAN = json.JSONDecoder().scan_once
"""The scanner ``json.loads`` runs (the same defaults), called without its per-call checks."""


def _scan_object(text: str, start: int) -> tuple[Any, int]:
    """Read the JSON value at ``text[start]``: ``(value, end)``; ``(None, -1)`` if none.

    For a line that starts at ``start`` with ``{`` and whose value ends exactly at the line's
    end (its newline, or the end of ``text``), the value is what ``json.loads(line)`` returns:
    the scanner reads no character past an object's closing brace, so it reads the same
    characters as on the line alone. Any other outcome (a value that ends early or runs past
    the newline, an error) sends the line to ``json.loads``, which gives the error to report.
    """
    try:
        return _SCAN(text, start)
    except (ValueError, StopIteration, RecursionError):
        return None, -1


def claude_code_drafts(entries: list[tuple[int, dict]], repairs: list[str],
                      info: dict[str, Any], compaction: str, *,
                      owned: bool = False) -> list[MessageDraft]:
    """Follow the ``parentUuid`` chain and build message drafts (the module doc gives the rules).

    Args:
        entries: ``(line_number, entry)`` pairs from :func:`parse_jsonl`.
        repairs: the loader's repair log; each change is appended to it.
        info: the transcript's info dict; skipped entries, compactions and ``api_turns``
            (distinct ``message.id`` values: model requests) are counted in it.
        compaction: ``"restart"`` starts at the last compaction summary, ``"full"`` loads what
            came before it too.
        owned: True when the caller hands over ``entries`` (the loader, which parsed them and
            drops them after): the drafts then take the entries' block dicts as they are
            instead of copies (:func:`.drafts.owned_blocks`). Default False: copies, the
            entries are left unshared.

    Returns:
        The drafts along the chain, oldest first.

    Raises:
        TranscriptError: no user or assistant entries outside sidechains.
    """
    linear = linear_chain(entries)
    if linear is not None:  # the usual file: one unbroken chain of message entries
        candidates, chain = linear
        info["skipped_entries"] = {}
        info["sidechain_entries"] = 0
        info["compactions"] = 0
        chain_ids: set = set()  # asked only of entries off the chain: none here
    else:
        candidates, chain, chain_ids = _follow_chain(entries, repairs, info, compaction)
    blocks_of = owned_blocks if owned else content_blocks
    included: set[str] = set()
    drafts: list[MessageDraft] = []
    api_turns: set[str] = set()
    models: list[str] = []
    synthetic: list[int] = []
    for n, e, uuid, message, assistant in candidates:
        on_chain = uuid in chain
        if assistant:
            mid = message.get("id")
            if not on_chain and mid not in chain_ids:
                continue
            included.add(uuid)
            model = message.get("model")
            if model == SYNTHETIC_MODEL:
                synthetic.append(n)
                continue
            models.append(model)
            api_turns.add(mid or f"line {n}")
            drafts.append(MessageDraft("assistant", blocks_of(message.get("content")), "line",
                                       [n], message.get("usage"), mid,
                                       seconds(e.get("timestamp"))))
        else:
            blocks = blocks_of(message.get("content"))
            # off the chain, only a sibling is kept: results only, its parent included
            if not on_chain and not (blocks and e.get("parentUuid") in included and all(
                    b.get("type") == "tool_result" for b in blocks)):
                continue
            included.add(uuid)
            drafts.append(MessageDraft("user", blocks, "line", [n],
                                       time=seconds(e.get("timestamp"))))
    if synthetic:
        repairs.append(f"line{'s' if len(synthetic) > 1 else ''} {format_span(synthetic)}: "
                       f"dropped {len(synthetic)} <synthetic> "
                       "assistant entries (written by Claude Code, not the model)")
    info["api_turns"] = len(api_turns)
    info["_models"] = [m for m in models if isinstance(m, str) and m]
    return drafts


def _follow_chain(entries: list[tuple[int, dict]], repairs: list[str], info: dict[str, Any],
                  compaction: str) -> tuple[list[tuple[int, dict, Any, dict, bool]], set,
                                            set]:
    """:func:`claude_code_drafts`'s walk of any file: ``(candidates, chain, chain_ids)``."""
    by_uuid: dict[str, tuple[int, dict]] = {}
    # message entries outside sidechains, as (line, entry, uuid, message, is_assistant): the
    # fields the later passes ask, read once here
    candidates: list[tuple[int, dict, Any, dict, bool]] = []
    skipped: dict[Any, int] = {}  # entry type -> count
    sidechain = 0
    for n, e in entries:  # one pass: clean the ids, index by uuid, sort the entries out
        get = e.get
        uuid, message = get("uuid"), get("message")
        # _clean_ids' usual entry, asked here (it returns such an entry as it is): every
        # link id a str or missing, exact types first, as JSON gives them
        if not (type(uuid) in _ID_TYPES and type(get("parentUuid")) in _ID_TYPES
                and type(get("logicalParentUuid")) in _ID_TYPES
                and (not isinstance(message, dict) or type(message.get("id")) in _ID_TYPES)):
            e = _clean_ids(n, e, repairs)
            get = e.get
            uuid, message = get("uuid"), get("message")
        if isinstance(uuid, str):
            by_uuid[uuid] = (n, e)
        side = get("isSidechain")
        if side:
            sidechain += 1
        kind = get("type")
        if not (kind in ("user", "assistant") and isinstance(message, dict)):
            skipped[kind] = skipped.get(kind, 0) + 1  # not a message entry
        elif not side:
            candidates.append((n, e, uuid, message, kind == "assistant"))
    info["skipped_entries"] = skipped
    info["sidechain_entries"] = sidechain
    if not candidates:
        raise TranscriptError("no user or assistant entries outside sidechains")
    chain: set[str] = set()
    n, entry = candidates[-1][:2]
    compactions = 0
    while True:
        uuid = entry.get("uuid")
        if uuid in chain:
            repairs.append(f"line {n}: parentUuid cycle; the chain stops here")
            break
        chain.add(uuid)
        parent = entry.get("parentUuid")
        if entry.get("type") == "system" and entry.get("subtype") == "compact_boundary":
            compactions += 1
            earlier = sum(1 for c in candidates if c[0] < n)
            if compaction == "full" and entry.get("logicalParentUuid") in by_uuid:
                repairs.append(f"line {n}: compact_boundary: compaction='full' loads the "
                               f"{earlier} message entries before it as well as the summary")
                parent = entry["logicalParentUuid"]
            else:
                repairs.append(f"line {n}: compact_boundary: the history restarts at the "
                               f"compaction summary; {earlier} earlier message entries are not "
                               "loaded (compaction='full' loads them)")
                break
        if parent is None:
            break
        if parent not in by_uuid:
            repairs.append(f"line {n}: parentUuid {parent} points outside the file; "
                           "the history starts here")
            break
        n, entry = by_uuid[parent]
    info["compactions"] = compactions
    chain_ids = {message.get("id") for _, _, uuid, message, assistant in candidates
                 if assistant and uuid in chain}
    chain_ids.discard(None)
    return candidates, chain, chain_ids


def _clean_ids(n: int, entry: dict, repairs: list[str]) -> dict:
    """A copy of ``entry`` whose link ids that are not strings are None (reported)."""
    message = entry.get("message")
    get = entry.get
    # the usual entry: every link id a str or missing (exact types first, as JSON gives them)
    if (type(get("uuid")) in _ID_TYPES and type(get("parentUuid")) in _ID_TYPES
            and type(get("logicalParentUuid")) in _ID_TYPES
            and (not isinstance(message, dict) or type(message.get("id")) in _ID_TYPES)):
        return entry
    bad_id = isinstance(message, dict) and not _id_or_none(message.get("id"))
    if (not bad_id and _id_or_none(entry.get("uuid")) and _id_or_none(entry.get("parentUuid"))
            and _id_or_none(entry.get("logicalParentUuid"))):
        return entry  # str subclasses are strings too: nothing to clean
    bad = [k for k in ("uuid", "parentUuid", "logicalParentUuid")
           if entry.get(k) is not None and not isinstance(entry[k], str)]
    repairs.append(f"line {n}: {', '.join(bad + ['message.id'] * bad_id)} not a string; "
                   "treated as missing")
    entry = {**entry, **{k: None for k in bad}}
    if bad_id:
        entry["message"] = {**message, "id": None}
    return entry


_ID_TYPES = (str, type(None))
"""The exact types of a usable link id (JSON gives no subclasses): a string or missing."""


def _id_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


def join_split_responses(drafts: list[MessageDraft]) -> list[MessageDraft]:
    """Fold assistant lines sharing one ``message.id`` into the first (Claude Code quirk).

    Only tool_result-only user lines may sit between them (Claude Code writes each result
    right after its tool_use line); the usage kept is the last line's (the final count), and
    so is the time.

    Args:
        drafts: the drafts in file order; the first of each group is extended in place.

    Returns:
        A new list without the folded lines; when no two drafts share a ``msg_id`` nothing
        folds, and the list is copied as it is (:func:`_join_split_slowly`, the fold itself,
        gives the same; ``tests/test_claude_code_chain.py`` compares the two).
    """
    ids = list(filter(None, map(_MSG_ID, drafts)))
    try:
        if len(set(ids)) == len(ids):
            return list(drafts)
    except TypeError:  # an unhashable id: folded as below
        pass
    return _join_split_slowly(drafts)


_MSG_ID = operator.attrgetter("msg_id")


def _join_split_slowly(drafts: list[MessageDraft]) -> list[MessageDraft]:
    """:func:`join_split_responses` by folding every draft in turn."""
    out: list[MessageDraft] = []
    last_assistant: MessageDraft | None = None
    for draft in drafts:
        if draft.role == "assistant":
            if (last_assistant is not None and draft.msg_id
                    and last_assistant.msg_id == draft.msg_id):
                last_assistant.blocks.extend(draft.blocks)
                last_assistant.positions.append(draft.positions[0])
                last_assistant.usage = draft.usage or last_assistant.usage
                last_assistant.time = draft.time if draft.time is not None else last_assistant.time
                continue
            last_assistant = draft
        elif any(b.get("type") != "tool_result" for b in draft.blocks):
            last_assistant = None
        out.append(draft)
    return out
