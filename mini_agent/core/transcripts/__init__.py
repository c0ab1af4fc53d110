"""Load real agent transcripts into plain ``Message`` histories the API would accept.

Formats (detected from the file's content; see ``../shared/data/README.md`` for real samples):

* ``"claude-code"``: Claude Code session JSONL, read by :mod:`.claude_code`;
* ``"mini-agent-session"``: this kit's own session log (``{"type": "message", "message": ...}``),
  read here (:func:`_session_drafts`);
* ``"mini-swe-agent"``: ``*.traj.json``, ``{"messages": [...], "info": {...}}`` or a plain list,
  OpenAI-style chat messages (``tool_calls``, ``role: "tool"``, ``role: "exit"``);
* ``"swe-agent"``: ``*.traj``, ``{"history": [chat messages], "trajectory": [...], "info"}``;
* ``"messages-json"``: a JSON list of messages, or ``{"messages": [...], "system": ...}``;
  the last three are read by :mod:`.chat`.

Every reader produces :class:`~.drafts.MessageDraft` lists; :mod:`.repair` then makes the history
valid.
Each change to what the file says is written to ``Transcript.repairs`` with its line or
message number, never silently; the result passes ``validate_messages``.

Times (``Transcript.times``, Unix seconds per loaded message): Claude Code entries carry an
ISO ``timestamp``; this kit's session log a numeric ``timestamp``; mini-swe-agent 1.1 an
``extra["timestamp"]`` on assistant and tool messages. A message merged from several parts
(split responses, consecutive same-role messages) takes the time of its last part. A message
with no time of its own (mini-swe-agent's task and exit messages, an added placeholder or
missing-result message) takes the time of the message before it; messages before the first
timed one take that first time. Times are kept as recorded, not forced to increase.
``times`` is None when no loaded message has a time (SWE-agent, older mini-swe-agent,
plain messages JSON).

This module holds the entry point (:func:`parse_text`), the :class:`Transcript` result and
the format dispatch; reading the file is ``harness/transcript_files.load``. Pure. It does not
interpret any one format beyond telling them apart. Used by
:mod:`mini_agent.harness.analyze` and ``mini-agent analyze``; taught in
``notebooks/03_observation_masking.ipynb``.
"""

from __future__ import annotations

import collections
import dataclasses
import json
from pathlib import Path
from typing import Any, Literal

from mini_agent.core.messages import Message
from mini_agent.core.transcripts.chat import TEXT_ACTION_RE, chat_drafts
from mini_agent.core.transcripts.claude_code import (SKIPPED_ENTRY_TYPES, SYNTHETIC_MODEL,
                                                     claude_code_drafts,
                                                     join_split_responses, parse_jsonl)
from mini_agent.core.messages import MISSING_START_TEXT, NO_RESULT_TEXT
from mini_agent.core.transcripts.repair import clean_blocks, drop_all_thinking, finish
from mini_agent.core.transcripts.valid_drafts import blocks_valid
from mini_agent.core.transcripts.drafts import (MessageDraft, TranscriptError, content_blocks,
                                                seconds)

__all__ = ["MISSING_START_TEXT", "NO_RESULT_TEXT", "SKIPPED_ENTRY_TYPES", "SYNTHETIC_MODEL",
           "TEXT_ACTION_RE", "Transcript", "TranscriptError", "has_transcript_shape", "parse_text"]


@dataclasses.dataclass
class Transcript:
    """A real agent history, loaded and repaired.

    Attributes: messages: ``list[MessageParam]`` oldest first, passes ``validate_messages``;
    usage: one entry per assistant message (same order): the real API ``usage`` of that
    response (Anthropic keys ``input_tokens``, ``cache_creation_input_tokens``,
    ``cache_read_input_tokens``, ``output_tokens``; OpenAI usage is mapped to them) or None;
    repairs: human-readable lines, one per change made to what the file says, each with the
    line (JSONL, 1-based) or ``messages[i]`` position; source_format: see the module doc;
    model: the model name most assistant messages used, or None; path: the file read;
    system: the system prompt when the file records one; info: counts and extra fields
    (``api_turns``, ``compactions``, ``skipped_entries``, ``exit``...); times: Unix seconds
    per message, parallel to ``messages`` (``ViewContext.times``), or None when the file
    records no usable time (see "Times" in the module doc).
    """

    messages: list[Message]
    usage: list[dict | None]
    repairs: list[str]
    source_format: str
    model: str | None = None
    path: Path | None = None
    system: str | None = None
    info: dict[str, Any] = dataclasses.field(default_factory=dict)
    times: list[float] | None = None


# --------------------------------------------------------------------------- entry points

def parse_text(text: str, *, name: str = "", path: Path | None = None,
               compaction: Literal["restart", "full"] = "restart",
               thinking: Literal["keep", "drop"] = "keep",
               text_actions: Literal["keep", "tools"] = "keep") -> Transcript:
    """Parse a transcript from its text.

    A whole-document JSON value is a trajectory or messages file; otherwise the text is read as
    JSONL. A leading UTF-8 byte order mark is ignored.

    Args:
        text: the file's whole text.
        name: the file name; hints the format and labels the repairs ("" for none).
        path: where the text came from, kept in ``Transcript.path`` (None: not from a file).
        compaction: Claude Code only: ``"restart"`` starts the history at the last compaction
            summary, ``"full"`` loads what came before it too.
        thinking: ``"drop"`` removes every thinking block (reported); ``"keep"`` keeps them.
        text_actions: ``"tools"`` turns text-format actions (mini-swe-agent's fenced command,
            SWE-agent's ``action`` field) into a ``bash`` ``tool_use`` answered by the next
            observation (reported); ``"keep"`` leaves them as plain text.

    Returns:
        The loaded and repaired :class:`Transcript`.

    Raises:
        TranscriptError: neither JSON nor JSONL fits, no repair makes the history valid, or a
            field has an impossible type that no repair covers (the message names it).
        ValueError: ``compaction`` is neither "restart" nor "full".
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
        except ValueError:   # not one JSON document (JSONL?), or a number too long to read
            doc = None
        except RecursionError:
            raise TranscriptError(f"{label}: JSON nested too deeply to be a transcript") from None
    repairs: list[str] = []
    info: dict[str, Any] = {}
    if doc is None:
        entries = parse_jsonl(text, repairs)
        if not entries:
            raise TranscriptError(f"{label}: not a transcript (no JSON lines found)")
        fmt, system = _jsonl_format(entries), None
        if fmt == "mini-agent-session":
            drafts = _session_drafts(entries, repairs, info)
        elif fmt == "claude-code":
            drafts = claude_code_drafts(entries, repairs, info, compaction, owned=True)
        else:
            raise TranscriptError(f"{label}: unknown JSONL format (no user/assistant entries)")
    else:
        fmt, chat = _classify(doc, name, label)
        if isinstance(doc, dict):
            info.update({k: doc[k] for k in ("instance_id", "trajectory_format") if k in doc})
            stats = (doc.get("info") or {}) if isinstance(doc.get("info"), dict) else {}
            info.update({k: stats[k] for k in ("exit_status", "model_stats") if k in stats})
        drafts, system = chat_drafts(chat, repairs, info, text_actions)
        if isinstance(doc, dict) and isinstance(doc.get("system"), str):
            system = "\n\n".join(s for s in (doc["system"], system) if s)
    if thinking == "drop":
        drop_all_thinking(drafts, repairs)
    checked = blocks_valid(drafts)  # clean_blocks would change nothing: not run
    if not checked:
        clean_blocks(drafts, repairs)
    if fmt == "claude-code":
        drafts = join_split_responses(drafts)
    messages, usage, times = finish(drafts, repairs, label, blocks_checked=checked)
    models = collections.Counter(info.pop("_models", []))
    return Transcript(messages=messages, usage=usage, repairs=repairs, source_format=fmt,
                      model=models.most_common(1)[0][0] if models else None, path=path,
                      system=system, info=info, times=times)


def _jsonl_format(entries: list[tuple[int, dict]]) -> str | None:
    """Tell the JSONL format in one pass: ``"mini-agent-session"`` when an entry is a
    ``message`` without a ``uuid``, else ``"claude-code"`` when one is a user or assistant
    entry, else None (the two ``any()`` scans this replaces, asked in that order)."""
    chat = False
    for _, e in entries:
        kind = e.get("type")
        if kind == "message" and "uuid" not in e:
            return "mini-agent-session"
        if not chat and kind in ("user", "assistant"):
            chat = True
    return "claude-code" if chat else None


def _session_drafts(entries: list[tuple[int, dict]], repairs: list[str],
                   info: dict[str, Any]) -> list[MessageDraft]:
    """Message drafts of this kit's session log (entries: :mod:`mini_agent.harness.session`)."""
    drafts = []
    for n, e in entries:
        kind = e.get("type")
        if kind == "meta" and isinstance(e.get("model"), str) and e["model"]:
            info["_models"] = [e["model"]]
        elif kind == "tool_result" and isinstance(e.get("block"), dict):
            drafts.append(MessageDraft("user", [dict(e["block"])], "line", [n],
                              time=seconds(e.get("timestamp"))))
        elif kind == "message" and isinstance(e.get("message"), dict):
            role = e["message"].get("role")
            if role not in ("user", "assistant"):
                repairs.append(f"line {n}: message with role {role!r:.60} ignored")
                continue
            drafts.append(MessageDraft(role, content_blocks(e["message"].get("content")), "line",
                                       [n], e["message"].get("usage"),
                                       time=seconds(e.get("timestamp"))))
    info["api_turns"] = sum(1 for t in drafts if t.role == "assistant")
    return drafts


def has_transcript_shape(doc: Any, name: str) -> bool:
    """Say whether a parsed JSON document has the shape of a transcript the loader reads.

    Args:
        doc: the file's whole JSON value.
        name: the file's name (``.traj.json`` names a mini-swe-agent trajectory).

    Returns:
        True for a SWE-agent or mini-swe-agent trajectory or a messages list (whether its
        messages then load is another matter); False for any other JSON (a ``config.json``).
    """
    try:
        _classify(doc, name, name)
    except TranscriptError:
        return False
    return True


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
