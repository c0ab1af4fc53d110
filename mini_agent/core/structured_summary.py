"""A deterministic structured summary of a history, and the offline brain that answers with it.

:func:`structured_summary` writes, from a history alone and without a model, a summary with
the sections :data:`mini_agent.core.compaction.SUMMARY_PROMPT` asks for (task, decisions,
current state, exact identifiers, open problems, next steps). It is what ``auto_compact``
uses offline, what the simulated server-side compaction
(:mod:`mini_agent.core.server_compaction`) summarises with, and what :class:`SummaryBrain`
answers when the offline Claude is asked for a summary (so
``model_summarizer(offline_client(SummaryBrain()))`` runs the online code path).

Taught in ``notebooks/04_compaction.ipynb``.

Source:
    seed 004 (what a summary must keep: decisions, open bugs, exact details); the section
    list of ``SUMMARY_PROMPT``.
"""

from __future__ import annotations

import re
from typing import Any

from mini_agent.core.compaction import SUMMARY_PREFIX, SUMMARY_PROMPT
from mini_agent.core.messages import (Message, content_blocks, text_block, tool_names_by_id,
                                      tool_result_text)
from mini_agent.core.text_scan import findall_in_words, names_a_word

SECTIONS = ("Task", "Decisions", "Current state", "Identifiers", "Open problems", "Next steps")

_PATH_RE = re.compile(r"(?<![\w/])(?:[\w.-]+/)+[\w.-]+\.\w+|(?<![\w/.])[\w-]+\.(?:py|js|ts|go|"
                      r"md|json|toml|txt|yaml|yml|cfg|ini|rs|c|h|sh|ipynb|lock)\b")
_SYMBOL_RE = re.compile(r"\b[A-Za-z_][\w.]*\(\)")
_ERROR_WORDS = ("error", "failed", "failure", "traceback", "exception", "not found")
_ERROR_RE = re.compile(r"(error|failed|failure|traceback|exception|not found)", re.I)
_DECISION_RE = re.compile(r"\b(decid|decision|instead|because|rather than|chose|choose|agreed|"
                          r"should|must)", re.I)
"""A sentence that states a choice or its reason. An intention alone ("I will read it", "let me
run the tests") is not a decision: the next turn carries it out, so only the newest intentions
are kept, under Next steps."""
_NEXT_RE = re.compile(r"\b(next|then|will|I'll|let me|now)\b", re.I)


def _texts(message: Message) -> list[str]:
    return [b["text"] for b in content_blocks(message) if b.get("type") == "text"
            and b.get("text", "").strip()]


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def _paths_and_symbols(text: str) -> list[str]:
    """``_PATH_RE.findall(text) + _SYMBOL_RE.findall(text)``, searching only the words that
    can hold a match (every path has a ".", every symbol a "()"; see core/text_scan.py)."""
    words = text.split() if "." in text else None  # no "." (no path): split for "()" only
    return findall_in_words(_PATH_RE, text, (".",), words) + \
        findall_in_words(_SYMBOL_RE, text, ("()",), words)


def _names_error(text: str) -> bool:
    """``bool(_ERROR_RE.search(text))``, without the regex for ASCII text."""
    return names_a_word(text, _ERROR_WORDS, _ERROR_RE)


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _previous_sections(text: str) -> dict[str, list[str]]:
    """Parse an earlier summary's ``## Section`` blocks into lines (for incremental summaries)."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            sections[current] = []
        elif current and line.strip():
            sections[current].append(line.rstrip())
    return sections


def _add(items: list[str], item: str, limit: int) -> None:
    if item and item not in items and len(items) < limit:
        items.append(item)


def structured_summary(messages: list[Message]) -> str:
    """Write a deterministic structured summary of ``messages`` (no model involved).

    Sections, in order: ``## Task`` (the first user text, whole; carried over from an earlier
    summary when the history starts with one), ``## Decisions`` (assistant sentences that
    state a choice or its reason: decided, instead, because, must...; a bare intention such as
    "I will read it" is not a decision), ``## Current state`` (exchanges and tool calls so far,
    the last assistant text, the last tool call and its outcome), ``## Identifiers`` (paths,
    ``name()`` symbols and tool inputs, exactly as written, first appearance first),
    ``## Open problems`` (first error line of failed or erroring tool results, newest last),
    ``## Next steps`` (the sentences of the last assistant text that say what comes next).

    Args:
        messages: the history to summarise; never mutated.

    Returns:
        The summary as markdown text.

    Raises:
        ValueError: ``messages`` is empty.

    Source:
        the section list of SUMMARY_PROMPT (seed 004: keep decisions, open bugs, details).

    >>> s = structured_summary([{"role": "user", "content": "Fix parse() in src/app.py"}])
    >>> s.splitlines()[:2]
    ['## Task', 'Fix parse() in src/app.py']
    """
    if not messages:
        raise ValueError("structured_summary needs at least one message")
    first = "\n".join(_texts(messages[0]))
    previous: dict[str, list[str]] = {}
    if first.startswith(SUMMARY_PREFIX):
        previous = _previous_sections(first[len(SUMMARY_PREFIX):])
        task = "\n".join(previous.get("Task", [])) or "(unknown)"
    else:
        task = first or "(no text in the first message)"
    decisions = [d for d in previous.get("Decisions", [])][-6:]
    identifiers = [i[2:] if i.startswith("- ") else i for i in previous.get("Identifiers", [])]
    problems = list(previous.get("Open problems", []))[-4:]
    names = tool_names_by_id(messages)
    inputs: dict[str, dict] = {}
    tool_calls = 0
    last_text = ""
    last_call = ""
    for m in messages[1:]:
        for b in content_blocks(m):
            kind = b.get("type")
            if kind == "text" and m.get("role") == "assistant":
                last_text = b["text"]
                for s in _sentences(b["text"]):
                    if _DECISION_RE.search(s):
                        _add(decisions, "- " + _short(s, 200), 10_000)  # newest 12 kept
            # (once 60 identifiers are kept, no later one can be added: not searched)
            if (kind == "text" or kind == "tool_result") and len(identifiers) < 60:
                text = b.get("text") if kind == "text" else tool_result_text(b)
                for ident in _paths_and_symbols(text or ""):
                    _add(identifiers, ident, 60)
            if kind == "tool_use":
                tool_calls += 1
                inputs[b.get("id", "")] = b.get("input", {})
                for value in (b.get("input") or {}).values():
                    # paths and symbols only: a grep pattern like "tokenize(" or a bare
                    # directory name is an argument, not an identifier worth keeping
                    if isinstance(value, str) and 0 < len(value) <= 120 and \
                            len(identifiers) < 60:
                        for ident in _paths_and_symbols(value):
                            _add(identifiers, ident, 60)
            if kind == "tool_result":
                name = names.get(b.get("tool_use_id"), "tool")
                text = tool_result_text(b)
                # the first line naming an error (a match never spans lines: the whole text
                # is searched first, and split only when it names one)
                bad = next((ln for ln in text.splitlines() if _names_error(ln)), None) \
                    if _names_error(text) else None
                outcome = "error" if b.get("is_error") or bad else "ok"
                arg = next((v for v in inputs.get(b.get("tool_use_id"), {}).values()
                            if isinstance(v, str)), "")
                last_call = f"{name} {_short(arg, 80)} -> {outcome}".replace("  ", " ")
                if outcome == "error":
                    line = bad if bad is not None else (text.splitlines() or ["(no output)"])[0]
                    _add(problems, f"- {name} {_short(arg, 60)}: {_short(line, 160)}", 999)
    exchanges = sum(1 for m in messages if m.get("role") == "assistant")
    state = [f"- {exchanges} assistant turns and {tool_calls} tool calls in this part."]
    if last_call:
        state.append(f"- Last tool call: {last_call}.")
    if last_text:
        state.append(f"- Last assistant message: {_short(last_text, 300)}")
    nexts = [s for s in _sentences(last_text) if _NEXT_RE.search(s)][-3:]
    parts = {
        "Task": [task],
        "Decisions": decisions[-12:] or ["- (none stated)"],
        "Current state": previous.get("Current state", [])[:1] + state,
        "Identifiers": ["- " + i for i in identifiers[:60]] or ["- (none)"],
        "Open problems": problems[-6:] or ["- (none seen)"],
        "Next steps": ["- " + _short(s, 200) for s in nexts]
        or ["- Continue the task from the current state."],
    }
    return "\n".join(f"## {name}\n" + "\n".join(parts[name]) for name in SECTIONS)


class SummaryBrain:
    """A brain that answers a summary request with :func:`structured_summary`.

    A request is a summary request when its last user message ends with
    :data:`SUMMARY_PROMPT`; the conversation is read from the ``<conversation>`` rendering
    that ``model_summarizer`` sends, so only the text survives (tool inputs and results as
    lines). Any other request goes to ``fallback`` (a brain), or gets a short text reply.
    """

    def __init__(self, fallback: Any = None) -> None:
        self.fallback = fallback

    def respond(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one request: the summary for a summary request, else the fallback's reply.

        Args:
            request: the Messages API request body.

        Returns:
            ``{"content": [text], "stop_reason": "end_turn"}`` with the summary, or what
            ``fallback`` answers (a short text reply without one).
        """
        messages = request.get("messages", [])
        last = "\n".join(_texts(messages[-1])) if messages else ""
        if last.rstrip().endswith(SUMMARY_PROMPT.rstrip()):
            body = last.split("<conversation>\n", 1)[-1].split("\n</conversation>", 1)[0]
            summary = structured_summary([{"role": "user", "content": body.split("\n", 1)[0]
                                           .removeprefix("user: ") or "(empty)"},
                                          {"role": "assistant", "content": body or "(empty)"}])
            return {"content": [text_block(summary)], "stop_reason": "end_turn"}
        if self.fallback is not None:
            return self.fallback.respond(request)
        return {"content": [text_block("OK.")], "stop_reason": "end_turn"}
