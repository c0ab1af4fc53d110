"""Load real agent transcripts into plain ``MessageParam`` histories the API would accept.

Formats (detected from the file's content; see ``../shared/data/README.md`` for real samples):

* ``"claude-code"``: Claude Code session JSONL (``~/.claude/projects/<proj>/<session>.jsonl``),
  one entry per line: ``{"type": "user" | "assistant" | "system" | "progress" | ...,
  "uuid", "parentUuid", "isSidechain", "message": {...}}``;
* ``"mini-agent-session"``: this kit's own session log (``{"type": "message", "message": ...}``);
* ``"mini-swe-agent"``: ``*.traj.json``, ``{"messages": [...], "info": {...}}`` or a plain list,
  OpenAI-style chat messages (``tool_calls``, ``role: "tool"``, ``role: "exit"``);
* ``"swe-agent"``: ``*.traj``, ``{"history": [chat messages], "trajectory": [...], "info"}``;
* ``"messages-json"``: a JSON list of messages, or ``{"messages": [...], "system": ...}``.

Defined behaviour for every quirk of real files (each change is written to
``Transcript.repairs`` with its line or message number, never silently):

* Claude Code: the history is the ``parentUuid`` chain from the last non-sidechain message
  entry back to a root; entries of the same API response that Claude Code wrote on side
  branches (parallel ``tool_use`` lines sharing one ``message.id``, and their ``tool_result``
  lines) are brought back; ``isSidechain`` (sub-agent) entries and non-message entries
  (``progress``, ``system``, ``queue-operation``, ``file-history-snapshot``, ``pr-link``) are
  skipped; the lines of one ``message.id`` become ONE assistant message whose usage is the last
  line's; ``isMeta`` user entries are kept (Claude Code sends them to the model);
  ``<synthetic>`` assistant entries (written by the client, not the model) are dropped;
  a parent link that points outside the file ends the chain there; a truncated last line is
  ignored. Compaction (``system``/``compact_boundary`` then an ``isCompactSummary`` user
  entry): with ``compaction="restart"`` (default) the history starts at the summary, which
  is what the model saw after compacting; ``compaction="full"`` follows the boundary's
  ``logicalParentUuid`` and loads the pre-compaction history too, summary included.
* All formats: consecutive same-role messages are merged; empty or whitespace-only text
  blocks and signature-only (empty) thinking blocks are dropped; a ``tool_result`` whose
  ``tool_use`` is not in the previous assistant message is dropped; a ``tool_use`` with no
  recorded result gets an ``is_error`` result saying so (:data:`MISSING_RESULT_TEXT`);
  a history that starts with an assistant turn gets a placeholder first user message;
  ``system`` messages move to ``Transcript.system``. The result passes ``validate_messages``.

Reads one file; everything else is pure. Used by :mod:`mini_agent.evaluate` and
``mini-agent analyze``; taught in ``notebooks/03_observation_masking.ipynb``.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import re
from pathlib import Path
from typing import Any, Iterable, Literal

from .messages import (ALLOWED_BLOCK_KEYS, Block, MessageParam, MessageValidationError,
                       validate_messages)

MISSING_RESULT_TEXT = "[no tool_result recorded in the transcript]"
"""Content of the ``is_error`` result added for a ``tool_use`` the file never answered."""

MISSING_START_TEXT = "[the transcript starts with an assistant turn; earlier history is not in the file]"
"""Text of the user message put first when a history starts with an assistant turn."""

SKIPPED_ENTRY_TYPES = ("progress", "system", "queue-operation", "file-history-snapshot", "pr-link")
"""Claude Code entry types that carry no API message (counted in ``info["skipped_entries"]``)."""

SYNTHETIC_MODEL = "<synthetic>"
"""``message.model`` of assistant entries Claude Code writes itself (errors, interruptions)."""

TEXT_ACTION_RE = re.compile(r"```(?:mswea_bash_command|bash|sh)?[ \t]*\n(.*?)\n```", re.DOTALL)
"""A fenced command in a text-action reply (mini-swe-agent's ``mswea_bash_command`` format)."""


class TranscriptError(ValueError):
    """A file is missing, not a transcript, or cannot be turned into a valid history."""


@dataclasses.dataclass
class Transcript:
    """A real agent history, loaded and repaired.

    Attributes: messages: ``list[MessageParam]`` oldest first, passes ``validate_messages``;
    usage: one entry per assistant message (same order): the real API ``usage`` of that
    response (Anthropic keys ``input_tokens``, ``cache_creation_input_tokens``,
    ``cache_read_input_tokens``, ``output_tokens``; OpenAI usage is mapped to them) or None;
    repairs: human-readable lines, one per change made to what the file says, each with the
    line (JSONL, 1-based) or ``messages[i]`` position; source_format: see the module doc;
    model: the model name most assistant turns used, or None; path: the file read;
    system: the system prompt when the file records one; info: counts and extra fields
    (``api_turns``, ``compactions``, ``skipped_entries``, ``exit``...).
    """

    messages: list[MessageParam]
    usage: list[dict | None]
    repairs: list[str]
    source_format: str
    model: str | None = None
    path: Path | None = None
    system: str | None = None
    info: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class _Turn:
    """A message under construction: blocks plus where they came from and the API usage."""

    role: str
    blocks: list[Block]
    unit: str  # "line" (JSONL, 1-based) or "messages" (index into a chat list)
    positions: list[int]
    usage: dict | None = None
    msg_id: str | None = None

    @property
    def where(self) -> str:
        """``"line 5"``, ``"lines 5-8, 11"``, ``"messages[3]"`` or ``"messages[3-4]"``."""
        if not self.positions:
            return self.unit
        ranges = _ranges(self.positions)
        if self.unit == "messages":
            return f"messages[{ranges}]"
        return f"line{'s' if len(self.positions) > 1 else ''} {ranges}"


def _ranges(numbers: list[int]) -> str:
    """``[5, 6, 7, 9]`` -> ``"5-7, 9"`` (sorted, duplicates removed)."""
    out: list[str] = []
    for x in sorted(set(numbers)):
        if out and x == end + 1:
            end = x
            out[-1] = f"{start}-{end}"
        else:
            start = end = x
            out.append(str(x))
    return ", ".join(out)


# --------------------------------------------------------------------------- entry points

def load(path: str | Path, *, compaction: Literal["restart", "full"] = "restart",
         thinking: Literal["keep", "drop"] = "keep",
         text_actions: Literal["keep", "tools"] = "keep") -> Transcript:
    """Read a transcript file (any supported format) into a :class:`Transcript`.

    Args: path: the file; compaction: Claude Code only, ``"restart"`` starts the history at
    the last compaction summary, ``"full"`` loads what came before it too; thinking:
    ``"drop"`` removes every thinking block (reported); text_actions: ``"tools"`` turns
    text-format actions (mini-swe-agent's fenced command, SWE-agent's ``action`` field) into a
    ``tool_use`` named ``"bash"`` answered by a ``tool_result`` holding the next observation
    (reported), ``"keep"`` leaves them as plain text.
    Raises: TranscriptError (missing file, unknown format, unrepairable history).
    """
    path = Path(path)
    if path.is_dir():
        raise TranscriptError(f"{path} is a directory; pass one transcript file")
    if not path.is_file():
        raise TranscriptError(f"no such file: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise TranscriptError(f"cannot read {path}: {err}") from err
    return parse_text(text, name=path.name, path=path, compaction=compaction,
                      thinking=thinking, text_actions=text_actions)


def parse_text(text: str, *, name: str = "", path: Path | None = None,
               compaction: Literal["restart", "full"] = "restart",
               thinking: Literal["keep", "drop"] = "keep",
               text_actions: Literal["keep", "tools"] = "keep") -> Transcript:
    """Parse a transcript from its text (same options as :func:`load`; ``name`` hints the format).

    A whole-document JSON value is a trajectory or messages file; otherwise the text is read as
    JSONL. A leading UTF-8 byte order mark is ignored. Raises TranscriptError when neither
    fits, and for a field of an impossible type that no repair covers (the message names it).
    """
    if compaction not in ("restart", "full"):
        raise ValueError(f"compaction must be 'restart' or 'full', got {compaction!r}")
    label = name or (str(path) if path else "<text>")
    try:
        return _parse_text(text.removeprefix("\ufeff"), name=name, path=path, label=label,
                           compaction=compaction, thinking=thinking, text_actions=text_actions)
    except (TypeError, AttributeError, KeyError) as err:
        raise TranscriptError(f"{label}: malformed transcript, a field has an unexpected type "
                              f"({type(err).__name__}: {err})") from err


def _parse_text(text: str, *, name: str, path: Path | None, label: str, compaction: str,
                thinking: str, text_actions: str) -> Transcript:
    doc: Any = None
    if not name.endswith(".jsonl"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            doc = None
        except RecursionError:
            raise TranscriptError(f"{label}: JSON nested too deeply to be a transcript") from None
    repairs: list[str] = []
    info: dict[str, Any] = {}
    if doc is None:
        entries = _parse_jsonl(text, repairs)
        if not entries:
            raise TranscriptError(f"{label}: not a transcript (no JSON lines found)")
        if any(e.get("type") == "message" and "uuid" not in e for _, e in entries):
            fmt, system = "mini-agent-session", None
            turns = _session_turns(entries, repairs, info)
        elif any(e.get("type") in ("user", "assistant") for _, e in entries):
            fmt, system = "claude-code", None
            turns = _claude_code_turns(entries, repairs, info, compaction)
        else:
            raise TranscriptError(f"{label}: unknown JSONL format (no user/assistant entries)")
    else:
        fmt, chat = _classify(doc, name, label)
        if isinstance(doc, dict):
            info.update({k: doc[k] for k in ("instance_id", "trajectory_format") if k in doc})
            stats = (doc.get("info") or {}) if isinstance(doc.get("info"), dict) else {}
            info.update({k: stats[k] for k in ("exit_status", "model_stats") if k in stats})
        turns, system = _chat_turns(chat, repairs, info, text_actions)
        if isinstance(doc, dict) and isinstance(doc.get("system"), str):
            system = "\n\n".join(s for s in (doc["system"], system) if s)
    if thinking == "drop":
        _drop_all_thinking(turns, repairs)
    messages, usage = _finish(turns, repairs, label)
    models = collections.Counter(info.pop("_models", []))
    return Transcript(messages=messages, usage=usage, repairs=repairs, source_format=fmt,
                      model=models.most_common(1)[0][0] if models else None, path=path,
                      system=system, info=info)


# --------------------------------------------------------------------------- JSONL

def _parse_jsonl(text: str, repairs: list[str]) -> list[tuple[int, dict]]:
    """Return ``(line_number, entry)`` pairs; bad lines are skipped and reported."""
    lines = text.split("\n")
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    entries = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except RecursionError:
            repairs.append(f"line {i + 1}: JSON nested too deeply ({len(line)} chars) ignored")
            continue
        except json.JSONDecodeError:
            what = "truncated last line" if i == last else "line is not valid JSON"
            repairs.append(f"line {i + 1}: {what} ({len(line)} chars) ignored")
            continue
        if isinstance(entry, dict):
            entries.append((i + 1, entry))
        else:
            repairs.append(f"line {i + 1}: not a JSON object, ignored")
    return entries


def _is_message_entry(entry: dict) -> bool:
    return entry.get("type") in ("user", "assistant") and isinstance(entry.get("message"), dict)


def _claude_code_turns(entries: list[tuple[int, dict]], repairs: list[str],
                       info: dict[str, Any], compaction: str) -> list[_Turn]:
    """Follow the ``parentUuid`` chain and build turns (see the module doc for the rules)."""
    entries = [(n, _clean_ids(n, e, repairs)) for n, e in entries]
    by_uuid = {e["uuid"]: (n, e) for n, e in entries if isinstance(e.get("uuid"), str)}
    candidates = [(n, e) for n, e in entries if _is_message_entry(e) and not e.get("isSidechain")]
    info["skipped_entries"] = dict(collections.Counter(
        e.get("type") for _, e in entries if not _is_message_entry(e)))
    info["sidechain_entries"] = sum(1 for _, e in entries if e.get("isSidechain"))
    if not candidates:
        raise TranscriptError("no user or assistant entries outside sidechains")
    chain: set[str] = set()
    n, entry = candidates[-1]
    compactions = 0
    while True:
        if entry.get("uuid") in chain:
            repairs.append(f"line {n}: parentUuid cycle; the chain stops here")
            break
        chain.add(entry.get("uuid"))
        parent = entry.get("parentUuid")
        if entry.get("type") == "system" and entry.get("subtype") == "compact_boundary":
            compactions += 1
            earlier = sum(1 for m, e in candidates if m < n)
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
    chain_ids = {e["message"].get("id") for _, e in candidates
                 if e.get("uuid") in chain and e["type"] == "assistant"} - {None}
    included: set[str] = set()
    turns: list[_Turn] = []
    api_turns: set[str] = set()
    models: list[str] = []
    synthetic: list[int] = []
    for n, e in candidates:
        message = e["message"]
        on_chain = e.get("uuid") in chain
        if e["type"] == "assistant":
            if not on_chain and message.get("id") not in chain_ids:
                continue
            included.add(e.get("uuid"))
            if message.get("model") == SYNTHETIC_MODEL:
                synthetic.append(n)
                continue
            models.append(message.get("model"))
            mid = message.get("id")
            api_turns.add(mid or f"line {n}")
            turns.append(_Turn("assistant", _blocks(message.get("content")), "line", [n],
                               message.get("usage"), mid))
        else:
            blocks = _blocks(message.get("content"))
            results_only = bool(blocks) and all(b.get("type") == "tool_result" for b in blocks)
            sibling = results_only and e.get("parentUuid") in included
            if not (on_chain or sibling):
                continue
            included.add(e.get("uuid"))
            turns.append(_Turn("user", blocks, "line", [n]))
    if synthetic:
        repairs.append(f"line{'s' if len(synthetic) > 1 else ''} {_span(synthetic)}: dropped "
                       f"{len(synthetic)} <synthetic> "
                       "assistant entries (written by Claude Code, not the model)")
    info["api_turns"] = len(api_turns)
    info["_models"] = [m for m in models if isinstance(m, str) and m]
    return turns


def _clean_ids(n: int, entry: dict, repairs: list[str]) -> dict:
    """A copy of ``entry`` whose link ids that are not strings are None (reported)."""
    bad = [k for k in ("uuid", "parentUuid", "logicalParentUuid")
           if entry.get(k) is not None and not isinstance(entry[k], str)]
    message = entry.get("message")
    bad_id = isinstance(message, dict) and message.get("id") is not None \
        and not isinstance(message["id"], str)
    if not bad and not bad_id:
        return entry
    repairs.append(f"line {n}: {', '.join(bad + ['message.id'] * bad_id)} not a string; "
                   "treated as missing")
    entry = {**entry, **{k: None for k in bad}}
    if bad_id:
        entry["message"] = {**message, "id": None}
    return entry


def _blocks(content: Any) -> list[Block]:
    """Content (str or list of blocks) as a new list of shallow-copied blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [dict(b) if isinstance(b, dict) else {"type": "text", "text": str(b)}
                for b in content]
    return []


def _session_turns(entries: list[tuple[int, dict]], repairs: list[str],
                   info: dict[str, Any]) -> list[_Turn]:
    """Turns of this kit's session log (see :mod:`mini_agent.session` for the entry shapes)."""
    turns = []
    for n, e in entries:
        kind = e.get("type")
        if kind == "meta" and isinstance(e.get("model"), str) and e["model"]:
            info["_models"] = [e["model"]]
        elif kind == "tool_result" and isinstance(e.get("block"), dict):
            turns.append(_Turn("user", [dict(e["block"])], "line", [n]))
        elif kind == "message" and isinstance(e.get("message"), dict):
            role = e["message"].get("role")
            if role not in ("user", "assistant"):
                repairs.append(f"line {n}: message with role {role!r} ignored")
                continue
            turns.append(_Turn(role, _blocks(e["message"].get("content")), "line", [n],
                               e["message"].get("usage")))
    info["api_turns"] = sum(1 for t in turns if t.role == "assistant")
    return turns


def _span(numbers: list[Any], limit: int = 8) -> str:
    """``[3, 5, 9]`` -> ``"3, 5, 9"``; long lists are cut with ``...``."""
    shown = ", ".join(str(x) for x in numbers[:limit])
    return shown + (f", ... ({len(numbers)} in all)" if len(numbers) > limit else "")


# --------------------------------------------------------------------------- chat formats

def _classify(doc: Any, name: str, label: str) -> tuple[str, list]:
    """Return ``(source_format, chat_messages)`` for a whole-document JSON value."""
    if isinstance(doc, dict) and isinstance(doc.get("history"), list) and "trajectory" in doc:
        return "swe-agent", doc["history"]
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        mini = str(doc.get("trajectory_format", "")).startswith("mini-swe-agent") \
            or name.endswith(".traj.json")
        return ("mini-swe-agent" if mini else "messages-json"), doc["messages"]
    if isinstance(doc, list) and all(isinstance(m, dict) and "role" in m for m in doc) and doc:
        return ("mini-swe-agent" if name.endswith(".traj.json") else "messages-json"), doc
    raise TranscriptError(f"{label}: unknown format (expected Claude Code JSONL, a mini-swe-agent "
                          "or SWE-agent trajectory, or a JSON list of messages)")


def _text_of(content: Any) -> str:
    """Text of an OpenAI-style content (str, or a list of ``{"type": "text"}`` parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _openai_usage(usage: Any) -> dict | None:
    """Map OpenAI/LiteLLM usage to the Anthropic keys (cached prompt tokens -> cache reads)."""
    if not isinstance(usage, dict) or "prompt_tokens" not in usage:
        return usage if isinstance(usage, dict) and "input_tokens" in usage else None
    details = usage.get("prompt_tokens_details")
    cached = ((details.get("cached_tokens") if isinstance(details, dict) else None)
              or usage.get("prompt_cache_hit_tokens") or 0)
    numbers = (usage["prompt_tokens"], cached, usage.get("completion_tokens", 0))
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in numbers):
        return None  # not token counts: no usage rather than a wrong one
    return {"input_tokens": usage["prompt_tokens"] - cached, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": cached, "output_tokens": usage.get("completion_tokens", 0)}


def _tool_input(arguments: Any, where: str, repairs: list[str]) -> dict:
    """Parse an OpenAI ``function.arguments`` JSON string into a ``tool_use`` input dict."""
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments or "{}")
    except (TypeError, json.JSONDecodeError):
        repairs.append(f"{where}: tool call arguments are not JSON; kept as {{'arguments': str}}")
        return {"arguments": arguments}
    return value if isinstance(value, dict) else {"arguments": value}


def _chat_turns(chat: list, repairs: list[str], info: dict[str, Any],
                text_actions: str) -> tuple[list[_Turn], str | None]:
    """Turn OpenAI- or Anthropic-style chat messages into turns; return ``(turns, system)``."""
    turns: list[_Turn] = []
    system: list[str] = []
    models: list[str] = []
    pending_action: str | None = None  # id of a text action waiting for its observation
    mapped: list[int] = []
    for i, m in enumerate(chat):
        where, at = f"messages[{i}]", ("messages", [i])
        if not isinstance(m, dict):
            repairs.append(f"{where}: not a message object, ignored")
            continue
        role = m.get("role")
        extra = m.get("extra") if isinstance(m.get("extra"), dict) else {}
        if role == "system":
            if turns:
                repairs.append(f"{where}: system message moved to Transcript.system")
            system.append(_text_of(m.get("content")))
        elif role == "exit":
            info["exit"] = _text_of(m.get("content"))
            last = turns[-1] if turns else None
            waiting = [b["id"] for b in last.blocks if b.get("type") == "tool_use"] \
                if last is not None and last.role == "assistant" else []
            if waiting:
                turns.append(_Turn("user", [{"type": "tool_result", "tool_use_id": waiting[0],
                                             "content": info["exit"]}], *at))
                repairs.append(f"{where}: 'exit' message (the final submission) used as the "
                               f"tool_result of {waiting[0]}; also in Transcript.info['exit']")
            else:
                repairs.append(f"{where}: 'exit' message (the final submission) moved to "
                               "Transcript.info['exit']")
        elif role == "tool":
            ids = m.get("tool_call_ids") or [m.get("tool_call_id")]
            if not ids[0]:
                repairs.append(f"{where}: tool message without tool_call_id kept as user text")
                turns.append(_Turn("user", _blocks(_text_of(m.get("content"))), *at))
                continue
            blocks = [{"type": "tool_result", "tool_use_id": ids[0],
                       "content": _text_of(m.get("content"))}]
            blocks += [{"type": "tool_result", "tool_use_id": x,
                        "content": f"[see the result of {ids[0]}]"} for x in ids[1:]]
            turns.append(_Turn("user", blocks, *at))
        elif role == "user":
            content = m.get("content")
            if pending_action is not None:
                turns.append(_Turn("user", [{"type": "tool_result", "tool_use_id": pending_action,
                                             "content": _text_of(content)}], *at))
                pending_action = None
            else:
                turns.append(_Turn("user", _chat_blocks(content, where, repairs), *at))
        elif role == "assistant":
            blocks: list[Block] = []
            reasoning = m.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning.strip():
                blocks.append({"type": "thinking", "thinking": reasoning})
            blocks += _chat_blocks(m.get("content"), where, repairs)
            calls = m.get("tool_calls") or []
            if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
                repairs.append(f"{where}: tool_calls entries that are not objects dropped")
                calls = [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
            if isinstance(m.get("function_call"), dict):
                calls = calls + [{"id": f"function_call_{i}", "function": m["function_call"]}]
            for j, call in enumerate(calls):
                function = call.get("function") if isinstance(call.get("function"), dict) else {}
                blocks.append({"type": "tool_use", "id": call.get("id") or f"call_{i}_{j}",
                               "name": function.get("name") or "tool",
                               "input": _tool_input(function.get("arguments"), where, repairs)})
            if not calls and text_actions == "tools":
                action = m.get("action")
                if not isinstance(action, str):
                    found = TEXT_ACTION_RE.findall(_text_of(m.get("content")))
                    action = found[0] if len(found) == 1 else None
                if action and action.strip():
                    pending_action = f"text_action_{i}"
                    blocks.append({"type": "tool_use", "id": pending_action, "name": "bash",
                                   "input": {"command": action.strip()}})
                    mapped.append(i)
            response = extra.get("response") if isinstance(extra.get("response"), dict) else {}
            if isinstance(response.get("model"), str) and response["model"]:
                models.append(response["model"])
            usage = _openai_usage(response.get("usage") or m.get("usage"))
            turns.append(_Turn("assistant", blocks, *at, usage))
        else:
            repairs.append(f"{where}: unknown role {role!r}, ignored")
    if mapped:
        repairs.append(f"text_actions='tools': {len(mapped)} text actions mapped to tool_use "
                       f"blocks (id text_action_<i>, next observation as tool_result) at "
                       f"messages[{_ranges(mapped)}]")
    info["_models"] = models
    info["api_turns"] = sum(1 for t in turns if t.role == "assistant")
    return turns, "\n\n".join(s for s in system if s) or None


def _chat_blocks(content: Any, where: str, repairs: list[str]) -> list[Block]:
    """Blocks of a chat message's content: Anthropic blocks kept, OpenAI text parts mapped."""
    if not isinstance(content, list):
        return _blocks(content) if isinstance(content, str) and content else []
    blocks = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ALLOWED_BLOCK_KEYS:
            blocks.append(dict(part))
        else:
            repairs.append(f"{where}: content part of type {kind!r} dropped (not an API block)")
    return blocks


# --------------------------------------------------------------------------- repairs

def _drop_all_thinking(turns: list[_Turn], repairs: list[str]) -> None:
    dropped = 0
    for turn in turns:
        kept = [b for b in turn.blocks if b.get("type") not in ("thinking", "redacted_thinking")]
        dropped += len(turn.blocks) - len(kept)
        turn.blocks = kept
    if dropped:
        repairs.append(f"thinking='drop': removed {dropped} thinking blocks")


def _clean_blocks(turns: list[_Turn], repairs: list[str]) -> None:
    """Drop empty text / signature-only thinking, strip non-API keys; report per kind."""
    found: dict[str, list[str]] = collections.defaultdict(list)
    found_ids: list[str] = []
    for turn in turns:
        kept = []
        for block in turn.blocks:
            kind = block.get("type")
            if kind == "text" and not str(block.get("text") or "").strip():
                found["dropped empty or whitespace-only text blocks"].append(turn.where)
                continue
            if kind == "thinking" and not str(block.get("thinking") or "").strip():
                found["dropped signature-only (empty) thinking blocks"].append(turn.where)
                continue
            allowed = ALLOWED_BLOCK_KEYS.get(kind)
            if allowed and set(block) - allowed:
                keys = ", ".join(sorted(set(block) - allowed))
                found[f"stripped non-API keys ({keys}) from {kind} blocks"].append(turn.where)
                block = {k: v for k, v in block.items() if k in allowed}
            if kind == "tool_use" and not (isinstance(block.get("id"), str) and block["id"]):
                found["gave tool_use blocks without a string id one (toolu_missing_<n>)"].append(
                    turn.where)
                block = {**block, "id": f"toolu_missing_{len(found_ids)}"}
                found_ids.append(block["id"])
            if kind == "tool_result" and not isinstance(block.get("tool_use_id"), str):
                found["dropped tool_result blocks without a string tool_use_id"].append(
                    turn.where)
                continue
            if kind == "tool_use" and not isinstance(block.get("input"), dict):
                found["wrapped tool_use inputs that were not objects as {'input': ...}"].append(
                    turn.where)
                block = {**block, "input": {"input": block.get("input")}}
            if kind == "tool_result" and isinstance(block.get("content"), list):
                parts = [p for p in block["content"] if not (
                    isinstance(p, dict) and p.get("type") == "text"
                    and not str(p.get("text") or "").strip())]
                if len(parts) != len(block["content"]):
                    found["dropped empty text parts in tool_result content"].append(turn.where)
                    block = {**block, "content": parts}
            kept.append(block)
        turn.blocks = kept
    for what, wheres in found.items():
        repairs.append(f"{what}: {len(wheres)} at {_span(_unique(wheres))}")


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _join_split_responses(turns: list[_Turn]) -> list[_Turn]:
    """Fold assistant lines sharing one ``message.id`` into the first (Claude Code quirk).

    Only tool_result-only user lines may sit between them (Claude Code writes each result
    right after its tool_use line); the usage kept is the last line's (the final count).
    """
    out: list[_Turn] = []
    last_assistant: _Turn | None = None
    for turn in turns:
        if turn.role == "assistant":
            if (last_assistant is not None and turn.msg_id
                    and last_assistant.msg_id == turn.msg_id):
                last_assistant.blocks.extend(turn.blocks)
                last_assistant.positions.append(turn.positions[0])
                last_assistant.usage = turn.usage or last_assistant.usage
                continue
            last_assistant = turn
        elif any(b.get("type") != "tool_result" for b in turn.blocks):
            last_assistant = None
        out.append(turn)
    return out


def _merge(turns: list[_Turn], repairs: list[str]) -> list[_Turn]:
    """Drop empty turns, merge consecutive same-role turns (assistant usage: the later one's)."""
    merged: list[_Turn] = []
    for turn in turns:
        if not turn.blocks:
            if turn.role == "assistant" or turn.usage is not None:
                repairs.append(f"{turn.where}: empty {turn.role} message dropped")
            continue
        if merged and merged[-1].role == turn.role:
            last = merged[-1]
            if turn.role == "assistant":
                repairs.append(f"{last.where} + {turn.where}: consecutive assistant messages "
                               "merged into one")
                last.usage = turn.usage or last.usage
            last.blocks = last.blocks + turn.blocks
            last.positions = last.positions + turn.positions
            continue
        merged.append(dataclasses.replace(turn, blocks=list(turn.blocks),
                                          positions=list(turn.positions)))
    return merged


def _pair(turns: list[_Turn], repairs: list[str]) -> bool:
    """Fix tool_use/tool_result pairing in place; return True when anything changed."""
    changed = False
    for i, turn in enumerate(turns):
        if turn.role == "assistant":
            ids = [b.get("id") for b in turn.blocks if b.get("type") == "tool_use"]
            nxt = turns[i + 1] if i + 1 < len(turns) and turns[i + 1].role == "user" else None
            answered = {b.get("tool_use_id") for b in nxt.blocks} if nxt else set()
            missing = [x for x in ids if x not in answered]
            if missing:
                filler = [{"type": "tool_result", "tool_use_id": x, "content": MISSING_RESULT_TEXT,
                           "is_error": True} for x in missing]
                if nxt is None:
                    turns.insert(i + 1, _Turn("user", filler, f"after {turn.where}", []))
                else:
                    nxt.blocks = filler + nxt.blocks
                repairs.append(f"{turn.where}: tool_use {', '.join(missing)} had no tool_result; "
                               "added an is_error result saying so")
                changed = True
        else:
            previous = turns[i - 1] if i > 0 and turns[i - 1].role == "assistant" else None
            asked = {b.get("id") for b in previous.blocks
                     if b.get("type") == "tool_use"} if previous else set()
            kept, seen = [], set()
            for block in turn.blocks:
                if block.get("type") == "tool_result":
                    tid = block.get("tool_use_id")
                    if tid not in asked or tid in seen:
                        why = "duplicate" if tid in seen else "orphan"
                        size = len(json.dumps(block.get("content"), ensure_ascii=False))
                        repairs.append(f"{turn.where}: dropped {why} tool_result {tid} "
                                       f"({size} chars; its tool_use is not in the previous "
                                       "assistant message)" if why == "orphan" else
                                       f"{turn.where}: dropped duplicate tool_result {tid}")
                        changed = True
                        continue
                    seen.add(tid)
                kept.append(block)
            results = [b for b in kept if b.get("type") == "tool_result"]
            others = [b for b in kept if b.get("type") != "tool_result"]
            if kept != results + others:
                repairs.append(f"{turn.where}: tool_result blocks moved before the user's text")
                changed = True
            turn.blocks = results + others
    return changed


def _rename_duplicate_ids(turns: list[_Turn], repairs: list[str]) -> None:
    """Give a reused ``tool_use`` id (and the result right after it) a ``_dupN`` suffix."""
    seen: collections.Counter[str] = collections.Counter()
    renamed: list[str] = []
    for i, turn in enumerate(turns):
        if turn.role != "assistant":
            continue
        mapping = {}
        for j, block in enumerate(turn.blocks):
            if block.get("type") != "tool_use":
                continue
            tid = block.get("id")
            seen[tid] += 1
            if seen[tid] > 1:
                mapping[tid] = f"{tid}_dup{seen[tid]}"
                turn.blocks[j] = {**block, "id": mapping[tid]}
                renamed.append(f"{turn.where} ({tid})")
        if mapping and i + 1 < len(turns) and turns[i + 1].role == "user":
            turns[i + 1].blocks = [
                {**b, "tool_use_id": mapping[b["tool_use_id"]]}
                if b.get("type") == "tool_result" and b.get("tool_use_id") in mapping else b
                for b in turns[i + 1].blocks]
    if renamed:
        repairs.append(f"renamed {len(renamed)} reused tool_use ids (with their tool_result) "
                       f"to <id>_dupN at {_span(renamed, 4)}")


def _finish(turns: list[_Turn], repairs: list[str],
            label: str) -> tuple[list[MessageParam], list[dict | None]]:
    """Clean, merge and pair turns until stable; validate; return ``(messages, usage)``."""
    _clean_blocks(turns, repairs)
    turns = _merge(_join_split_responses(turns), repairs)
    _rename_duplicate_ids(turns, repairs)
    for _ in range(5):
        if not _pair(turns, repairs):
            break
        turns = _merge(turns, repairs)
    if turns and turns[0].role == "assistant":
        turns.insert(0, _Turn("user", [{"type": "text", "text": MISSING_START_TEXT}], "start", []))
        repairs.append(f"{turns[1].where}: the history starts with an assistant turn; "
                       "a placeholder user message was put first")
    messages = [{"role": t.role, "content": t.blocks} for t in turns]
    try:
        validate_messages(messages)
    except MessageValidationError as err:
        raise TranscriptError(f"{label}: cannot repair into a valid history: {err}") from err
    return messages, [t.usage for t in turns if t.role == "assistant"]
