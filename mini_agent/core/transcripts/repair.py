"""Shared repairs that make a loaded history valid, each one reported (notebook 03).

Applied after every reader, whatever the format (``notebooks/03_observation_masking.ipynb``
loads real files through them): empty or whitespace-only text blocks and signature-only (empty)
thinking blocks are dropped; keys the API does not accept are stripped; consecutive same-role
messages are merged; a reused ``tool_use`` id gets a ``_dupN`` suffix; a ``tool_result`` whose
``tool_use`` is not in the previous assistant message is dropped; a ``tool_use`` with no
recorded result gets an ``is_error`` result saying so
(:data:`~mini_agent.core.messages.NO_RESULT_TEXT`); a history that starts with an assistant
message gets a placeholder first user message
(:data:`~mini_agent.core.messages.MISSING_START_TEXT`); the result passes ``validate_messages``.
Each change appends one line to ``repairs`` naming the line or message number. Merged messages
keep the time of their last part; messages added here get their time from :func:`message_times`.

Works on :class:`~mini_agent.core.transcripts.drafts.MessageDraft` lists in place (they are the
loader's own copies, never the caller's data). Does not read files or know any file format.

Source:
    the Messages API's validity rules as ``core/messages.validate_messages`` checks them, and
    the damage found in real transcripts (``../shared/data/``).
"""

from __future__ import annotations

import collections
import json
from typing import Iterable

from mini_agent.core.block_rules import ALLOWED_BLOCK_KEYS
from mini_agent.core.messages import (MISSING_START_TEXT, NO_RESULT_TEXT, Message,
                                      MessageValidationError, validate_messages)
from mini_agent.core.pricing import clean_usage
from mini_agent.core.transcripts.drafts import MessageDraft, TranscriptError, format_span
from mini_agent.core.transcripts.valid_drafts import history_valid


def drop_all_thinking(drafts: list[MessageDraft], repairs: list[str]) -> None:
    """Remove every thinking and redacted_thinking block, for ``thinking="drop"``.

    Args:
        drafts: the drafts, changed in place.
        repairs: the loader's repair log; one line with the count is appended when any was
            removed.
    """
    dropped = 0
    for draft in drafts:
        kept = [b for b in draft.blocks if b.get("type") not in ("thinking", "redacted_thinking")]
        dropped += len(draft.blocks) - len(kept)
        draft.blocks = kept
    if dropped:
        repairs.append(f"thinking='drop': removed {dropped} thinking blocks")


def clean_blocks(drafts: list[MessageDraft], repairs: list[str]) -> None:
    """Drop empty text and signature-only thinking, strip non-API keys; report per kind.

    Args:
        drafts: the drafts, changed in place.
        repairs: the loader's repair log; one line per kind of change, naming where.
    """
    found: dict[str, list[str]] = collections.defaultdict(list)
    found_ids: list[str] = []
    for draft in drafts:
        kept = []
        for block in draft.blocks:
            kind = block.get("type")
            if kind == "text":
                text = block.get("text")
                # a non-empty str with a non-whitespace character is kept (the usual text);
                # anything else is judged by its str(), as it always was
                if not (isinstance(text, str) and text and not text.isspace()) \
                        and not str(text or "").strip():
                    found["dropped empty or whitespace-only text blocks"].append(draft.where)
                    continue
            if kind == "thinking" and not str(block.get("thinking") or "").strip():
                found["dropped signature-only (empty) thinking blocks"].append(draft.where)
                continue
            allowed = ALLOWED_BLOCK_KEYS.get(kind)
            if allowed and not allowed.issuperset(block):  # a key beyond the allowed ones
                keys = ", ".join(sorted(set(block) - allowed))
                found[f"stripped non-API keys ({keys}) from {kind} blocks"].append(draft.where)
                block = {k: v for k, v in block.items() if k in allowed}
            if kind == "tool_use" and not (isinstance(block.get("id"), str) and block["id"]):
                found["gave tool_use blocks without a string id one (toolu_missing_<n>)"].append(
                    draft.where)
                block = {**block, "id": f"toolu_missing_{len(found_ids)}"}
                found_ids.append(block["id"])
            if kind == "tool_result" and not isinstance(block.get("tool_use_id"), str):
                found["dropped tool_result blocks without a string tool_use_id"].append(
                    draft.where)
                continue
            if kind == "tool_use" and not isinstance(block.get("input"), dict):
                found["wrapped tool_use inputs that were not objects as {'input': ...}"].append(
                    draft.where)
                block = {**block, "input": {"input": block.get("input")}}
            if kind == "tool_result" and isinstance(block.get("content"), list):
                parts = [p for p in block["content"] if not (
                    isinstance(p, dict) and p.get("type") == "text"
                    and not str(p.get("text") or "").strip())]
                if len(parts) != len(block["content"]):
                    found["dropped empty text parts in tool_result content"].append(draft.where)
                    block = {**block, "content": parts}
            kept.append(block)
        draft.blocks = kept
    for what, wheres in found.items():
        repairs.append(f"{what}: {len(wheres)} at {format_span(_unique(wheres))}")


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _merge(drafts: list[MessageDraft], repairs: list[str]) -> list[MessageDraft]:
    """Drop empty drafts, merge consecutive same-role drafts (assistant usage: the later one's).

    The first draft of a run is kept and extended (new ``blocks`` and ``positions`` lists);
    the drafts are the loader's own, so they are changed, not copied.
    """
    merged: list[MessageDraft] = []
    for draft in drafts:
        if not draft.blocks:
            if draft.role == "assistant" or draft.usage is not None:
                repairs.append(f"{draft.where}: empty {draft.role} message dropped")
            continue
        if merged and merged[-1].role == draft.role:
            last = merged[-1]
            if draft.role == "assistant":
                repairs.append(f"{last.where} + {draft.where}: consecutive assistant messages "
                               "merged into one")
                last.usage = draft.usage or last.usage
            last.time = draft.time if draft.time is not None else last.time
            last.blocks = last.blocks + draft.blocks
            last.positions = last.positions + draft.positions
            continue
        merged.append(draft)  # the loader's own draft, changed in place (no copy needed)
    return merged


def _pair(drafts: list[MessageDraft], repairs: list[str]) -> bool:
    """Fix tool_use/tool_result pairing in place; return True when anything changed."""
    changed = False
    asked: list = []  # the tool_use ids of the assistant draft just before (none: [])
    for i, draft in enumerate(drafts):
        if draft.role == "assistant":
            ids = asked = [b.get("id") for b in draft.blocks if b.get("type") == "tool_use"]
            if not ids:  # nothing to answer (the next draft is read for nothing else)
                continue
            nxt = drafts[i + 1] if i + 1 < len(drafts) and drafts[i + 1].role == "user" else None
            answered = {b.get("tool_use_id") for b in nxt.blocks} if nxt else set()
            missing = [x for x in ids if x not in answered]
            if missing:
                filler = [{"type": "tool_result", "tool_use_id": x, "content": NO_RESULT_TEXT,
                           "is_error": True} for x in missing]
                if nxt is None:
                    drafts.insert(i + 1, MessageDraft("user", filler, f"after {draft.where}", []))
                else:
                    nxt.blocks = filler + nxt.blocks
                repairs.append(f"{draft.where}: tool_use {', '.join(missing)} had no tool_result; "
                               "added an is_error result saying so")
                changed = True
        else:
            # ``asked``: the previous draft's tool_use ids when it is an assistant draft (its
            # blocks are not changed here), else none
            if not (i > 0 and drafts[i - 1].role == "assistant"):
                asked = []
            results, others, seen = [], [], set()
            moved = False  # a tool_result after another block: the results are moved first
            for block in draft.blocks:
                if block.get("type") == "tool_result":
                    tid = block.get("tool_use_id")
                    if tid not in asked or tid in seen:
                        why = "duplicate" if tid in seen else "orphan"
                        size = len(json.dumps(block.get("content"), ensure_ascii=False))
                        repairs.append(f"{draft.where}: dropped {why} tool_result {tid} "
                                       f"({size} chars; its tool_use is not in the previous "
                                       "assistant message)" if why == "orphan" else
                                       f"{draft.where}: dropped duplicate tool_result {tid}")
                        changed = True
                        continue
                    seen.add(tid)
                    results.append(block)
                    moved = moved or bool(others)
                else:
                    others.append(block)
            if moved:
                repairs.append(f"{draft.where}: tool_result blocks moved before the user's text")
                changed = True
            draft.blocks = results + others
            asked = []
    return changed


def _rename_duplicate_ids(drafts: list[MessageDraft], repairs: list[str]) -> None:
    """Give a reused ``tool_use`` id (and the result right after it) a ``_dupN`` suffix."""
    seen: collections.Counter[str] = collections.Counter()
    renamed: list[str] = []
    for i, draft in enumerate(drafts):
        if draft.role != "assistant":
            continue
        mapping = {}
        for j, block in enumerate(draft.blocks):
            if block.get("type") != "tool_use":
                continue
            tid = block.get("id")
            seen[tid] += 1
            if seen[tid] > 1:
                mapping[tid] = f"{tid}_dup{seen[tid]}"
                draft.blocks[j] = {**block, "id": mapping[tid]}
                renamed.append(f"{draft.where} ({tid})")
        if mapping and i + 1 < len(drafts) and drafts[i + 1].role == "user":
            drafts[i + 1].blocks = [
                {**b, "tool_use_id": mapping[b["tool_use_id"]]}
                if b.get("type") == "tool_result" and b.get("tool_use_id") in mapping else b
                for b in drafts[i + 1].blocks]
    if renamed:
        repairs.append(f"renamed {len(renamed)} reused tool_use ids (with their tool_result) "
                       f"to <id>_dupN at {format_span(renamed, 4)}")


def message_times(drafts: list[MessageDraft]) -> list[float] | None:
    """Give every draft a time: its own, else the previous draft's, else the first one's.

    Args:
        drafts: the final drafts, in order.

    Returns:
        One Unix time per draft (times None, 5.0, None, 9.0 -> ``[5.0, 5.0, 5.0, 9.0]``), or
        None when no draft has a time.
    """
    times = [t.time for t in drafts]
    if None not in times:  # every draft has its own time (the usual file): kept as they are
        return times or None
    known = [t for t in times if t is not None]
    if not known:
        return None
    times, last = [], known[0]
    for draft in drafts:
        last = draft.time if draft.time is not None else last
        times.append(last)
    return times


def finish(drafts: list[MessageDraft], repairs: list[str], label: str, *,
           blocks_checked: bool = False
           ) -> tuple[list[Message], list[dict | None], list[float] | None]:
    """Merge and pair drafts until stable, then validate.

    Expects drafts already through :func:`clean_blocks` (and, for Claude Code, the split
    responses joined). A history that needs no repair (:func:`.valid_drafts.history_valid`,
    its blocks accepted by :func:`.valid_drafts.blocks_valid`) is taken as it is: the
    repairs would change nothing and ``validate_messages`` would accept it.

    Args:
        drafts: the drafts; changed in place.
        repairs: the loader's repair log; each change is appended to it.
        label: the file's name, for the error message.
        blocks_checked: True when :func:`.valid_drafts.blocks_valid` accepted the blocks
            (then :func:`.valid_drafts.history_valid` is asked first); False (default) runs
            every repair.

    Returns:
        ``(messages, usage, times)``: the valid history, the usage of each assistant message
        (None where the file has none or one that is not token counts:
        :func:`~mini_agent.core.pricing.clean_usage`), and :func:`message_times` of the final drafts (None when
        the file has no times).

    Raises:
        TranscriptError: no repair makes the history valid; the message names ``label``.
    """
    if blocks_checked and history_valid(drafts):
        return _finished(drafts, [{"role": t.role, "content": t.blocks} for t in drafts],
                         repairs)
    drafts = _merge(drafts, repairs)
    _rename_duplicate_ids(drafts, repairs)
    for _ in range(5):
        if not _pair(drafts, repairs):
            break
        drafts = _merge(drafts, repairs)
    if drafts and drafts[0].role == "assistant":
        drafts.insert(0, MessageDraft("user", [{"type": "text", "text": MISSING_START_TEXT}],
                                      "start", []))
        repairs.append(f"{drafts[1].where}: the history starts with an assistant draft; "
                       "a placeholder user message was put first")
    messages = [{"role": t.role, "content": t.blocks} for t in drafts]
    try:
        validate_messages(messages, request=False)
    except MessageValidationError as err:
        raise TranscriptError(f"{label}: cannot repair into a valid history: {err}") from err
    return _finished(drafts, messages, repairs)


def _finished(drafts: list[MessageDraft], messages: list[Message], repairs: list[str]
              ) -> tuple[list[Message], list[dict | None], list[float] | None]:
    """:func:`finish`'s result for the final drafts and their valid ``messages``."""
    usage = []
    for t in drafts:
        if t.role == "assistant":
            usage.append(_clean_usage(t.usage))
            if t.usage is not None and usage[-1] is None:
                repairs.append(f"{t.where}: a usage that does not hold token counts ignored")
    return messages, usage, message_times(drafts)


def _clean_usage(usage: object) -> dict | None:
    """``clean_usage(usage)``, the usual recorded usage answered without its general checks.

    The usual usage is a plain dict of the four token counts as exact non-negative ints and
    no ``cache_creation`` breakdown: ``clean_usage`` returns a copy of it. Anything else is
    asked of ``clean_usage`` itself (``tests/test_valid_drafts.py`` compares the two).
    """
    if type(usage) is dict and "cache_creation" not in usage:
        get = usage.get
        a, b, c, d = (get("input_tokens"), get("output_tokens"),
                      get("cache_creation_input_tokens"), get("cache_read_input_tokens"))
        if type(a) is int and type(b) is int and type(c) is int and type(d) is int \
                and a >= 0 and b >= 0 and c >= 0 and d >= 0:
            return dict(usage)
    return clean_usage(usage)
