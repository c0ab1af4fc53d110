"""Read OpenAI-style chat messages into message drafts (notebook 03_observation_masking).

Covers mini-swe-agent ``*.traj.json`` (``{"messages": [...], "info": {...}}`` or a plain
list), SWE-agent ``*.traj`` (its ``history`` list) and a plain messages JSON list:

* ``system`` messages become ``Transcript.system`` (reported when not first);
* ``assistant`` ``tool_calls`` (and the legacy ``function_call``) become ``tool_use`` blocks
  whose input is the parsed ``function.arguments``; ``reasoning_content`` becomes a thinking
  block; LiteLLM ``usage`` is mapped to the Anthropic keys;
* ``role: "tool"`` messages become ``tool_result`` blocks (SWE-agent's ``tool_call_ids``
  answered by the first result); mini-swe-agent's final ``role: "exit"`` answers a waiting
  ``tool_use`` or moves to ``info["exit"]``;
* ``text_actions="tools"``: a fenced command (:data:`TEXT_ACTION_RE`) or SWE-agent ``action``
  becomes a ``bash`` ``tool_use`` answered by the next user message;
* a message's time is its ``extra["timestamp"]`` (Unix seconds; mini-swe-agent 1.1 records
  one on assistant and tool messages, not on the system, task or exit messages; SWE-agent
  and older mini-swe-agent files record none).

Pure (parsed JSON in, drafts out). Does not detect the format
(:mod:`mini_agent.core.transcripts` does) nor pair, merge or validate (:mod:`.repair`).

Source:
    the trajectory files of mini-swe-agent (1.1) and SWE-agent; the OpenAI chat message
    shape (``tool_calls``, ``role: "tool"``) as LiteLLM records it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mini_agent.core.block_rules import ALLOWED_BLOCK_KEYS
from mini_agent.core.messages import Block
from mini_agent.core.transcripts.drafts import MessageDraft, content_blocks, format_ranges, seconds

TEXT_ACTION_RE = re.compile(r"```(?:mswea_bash_command|bash|sh)?[ \t]*\n(.*?)\n```", re.DOTALL)
"""A fenced command in a text-action reply (mini-swe-agent's ``mswea_bash_command`` format)."""


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


def chat_drafts(chat: list, repairs: list[str], info: dict[str, Any],
               text_actions: str) -> tuple[list[MessageDraft], str | None]:
    """Turn OpenAI- or Anthropic-style chat messages into message drafts.

    Args:
        chat: the chat messages, in order; never mutated.
        repairs: the loader's repair log; each change is appended to it.
        info: the transcript's info dict; ``api_turns`` (assistant messages) and ``exit`` are
            set in it.
        text_actions: ``"tools"`` turns text-format actions into ``bash`` tool calls, ``"keep"``
            leaves them as text.

    Returns:
        ``(drafts, system)``: the drafts in order and the system prompt (system messages joined
        by blank lines), or None when there is none.
    """
    drafts: list[MessageDraft] = []
    system: list[str] = []
    models: list[str] = []
    pending_action: str | None = None  # id of a text action waiting for its observation
    mapped: list[int] = []
    for i, m in enumerate(chat):
        where = f"messages[{i}]"
        if not isinstance(m, dict):
            repairs.append(f"{where}: not a message object, ignored")
            continue
        role = m.get("role")
        extra = m.get("extra") if isinstance(m.get("extra"), dict) else {}
        at = {"unit": "messages", "positions": [i], "time": seconds(extra.get("timestamp"))}
        if role == "system":
            if drafts:
                repairs.append(f"{where}: system message moved to Transcript.system")
            system.append(_text_of(m.get("content")))
        elif role == "exit":
            info["exit"] = _text_of(m.get("content"))
            last = drafts[-1] if drafts else None
            waiting = [b["id"] for b in last.blocks if b.get("type") == "tool_use"] \
                if last is not None and last.role == "assistant" else []
            if waiting:
                result = {"type": "tool_result", "tool_use_id": waiting[0],
                          "content": info["exit"]}
                drafts.append(MessageDraft("user", [result], **at))
                repairs.append(f"{where}: 'exit' message (the final submission) used as the "
                               f"tool_result of {waiting[0]}; also in Transcript.info['exit']")
            else:
                repairs.append(f"{where}: 'exit' message (the final submission) moved to "
                               "Transcript.info['exit']")
        elif role == "tool":
            ids = m.get("tool_call_ids") or [m.get("tool_call_id")]
            if not ids[0]:
                repairs.append(f"{where}: tool message without tool_call_id kept as user text")
                drafts.append(MessageDraft("user", content_blocks(_text_of(m.get("content"))),
                                           **at))
                continue
            blocks = [{"type": "tool_result", "tool_use_id": ids[0],
                       "content": _text_of(m.get("content"))}]
            blocks += [{"type": "tool_result", "tool_use_id": x,
                        "content": f"[see the result of {ids[0]}]"} for x in ids[1:]]
            drafts.append(MessageDraft("user", blocks, **at))
        elif role == "user":
            content = m.get("content")
            if pending_action is not None:
                result = {"type": "tool_result", "tool_use_id": pending_action,
                          "content": _text_of(content)}
                drafts.append(MessageDraft("user", [result], **at))
                pending_action = None
            else:
                drafts.append(MessageDraft("user", _chat_blocks(content, where, repairs), **at))
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
            drafts.append(MessageDraft("assistant", blocks, **at, usage=usage))
        else:
            repairs.append(f"{where}: unknown role {role!r:.60}, ignored")
    if mapped:
        repairs.append(f"text_actions='tools': {len(mapped)} text actions mapped to tool_use "
                       f"blocks (id text_action_<i>, next observation as tool_result) at "
                       f"messages[{format_ranges(mapped)}]")
    info["_models"] = models
    info["api_turns"] = sum(1 for t in drafts if t.role == "assistant")
    return drafts, "\n\n".join(s for s in system if s) or None


def _chat_blocks(content: Any, where: str, repairs: list[str]) -> list[Block]:
    """Blocks of a chat message's content: Anthropic blocks kept, OpenAI text parts mapped."""
    if not isinstance(content, list):
        return content_blocks(content) if isinstance(content, str) and content else []
    blocks = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ALLOWED_BLOCK_KEYS:
            blocks.append(dict(part))
        else:
            repairs.append(f"{where}: content part of type {kind!r:.60} dropped (not an API block)")
    return blocks
