"""An offline summariser that follows a summary prompt's sections, and the revised prompt.

The chapter's lab: take a long conversation and its ten essential facts, summarise it with the
current compaction prompt, count the facts that survive verbatim, revise the prompt where
facts were lost, and count again. Offline there is no model to follow a prompt, so
:func:`prompt_summary` reads the prompt's ``## Section`` headings and fills each with a
deterministic extractor chosen by the heading's words (task, decisions, state, identifiers,
numbers, user instructions, open problems, next steps); a heading it has no extractor for is
written with ``(not extracted offline)``. Changing the prompt therefore changes the summary,
the way revising a prompt changes what a model writes.

:data:`REVISED_SUMMARY_PROMPT` is the result of the lab on the two kit conversations
(:mod:`.sample_conversations`): the original
:data:`~mini_agent.core.compaction.SUMMARY_PROMPT` lost the user's later instructions (only the
first message was kept as the task), numbers and ticket ids that are not paths, and the
earliest decisions (only the newest were kept); the revision adds a "User instructions"
and a "Numbers and ids" section and asks for every decision. :data:`SHORT_SUMMARY_PROMPT`
then drops the sections that repeat what the others hold (current state, next steps) to
check that a shorter summary keeps the score.

Pure: no IO, inputs never mutated. Taught in ``notebooks/11_evaluating_policies.ipynb``.
Source: 004_b74ef821c58ee4ec.txt (lab 2); the section list of SUMMARY_PROMPT.
"""

from __future__ import annotations

import re
from typing import Callable

from mini_agent.core.messages import Message, content_blocks, tool_result_text
from mini_agent.core.structured_summary import _paths_and_symbols
from mini_agent.core.text_scan import names_a_word

REVISED_SUMMARY_PROMPT = """\
Write a summary of the conversation above so that work can continue from it alone. The \
conversation will be replaced by your summary, so anything you leave out is lost. Use exactly \
these sections:

## Task
The user's original request, restated completely (goal, constraints, acceptance criteria).
## User instructions
Every instruction, rule or correction the user gave after the first message, copied word for \
word: these are binding and easy to lose.
## Decisions
Every decision made and the reason for it, from the first to the last, including rules \
agreed with the user.
## Current state
What is done, what is in progress, what has been verified (tests run, results).
## Identifiers
Exact file paths, function and class names, commands, copied character for character.
## Numbers and ids
Every number with its unit (counts, limits, versions, amounts) and every ticket, commit or \
record id, copied character for character with the sentence that gives it.
## Open problems
Every error message still unresolved, copied exactly, and the questions not yet answered.
## Next steps
The concrete next actions, in order.

Prefer completeness over brevity; never invent facts that are not in the conversation."""

SHORT_SUMMARY_PROMPT = """\
Write a summary of the conversation above so that work can continue from it alone. Use \
exactly these sections, and nothing else:

## Task
The user's original request, restated completely.
## User instructions
Every instruction, rule or correction the user gave after the first message, word for word.
## Decisions
Every decision made, from the first to the last.
## Identifiers
Exact file paths, function and class names, character for character.
## Numbers and ids
Every number with its unit and every ticket, commit or record id, with its sentence.
## Open problems
Every error message still unresolved, copied exactly.

Never invent facts that are not in the conversation."""

_DECISION_RE = re.compile(r"\b(decid|decision|instead|because|rather than|chose|choose|"
                          r"agreed|should|must|rule)|決め|決定|ことにし|方針|ルール|にします",
                          re.I)
_NEXT_RE = re.compile(r"\b(next|then|will|I'll|let me)\b|次に|これから", re.I)
_NUMBER_RE = re.compile(r"\d[\d,.]*\d|\d\s?(?:%|ms|s\b|MB|GB|冊|件|円|秒|個)|"
                        r"\b[A-Z]{2,}-\d+\b|\bv?\d+\.\d+(?:\.\d+)?\b|\b[0-9a-f]{7,40}\b")
_ERROR_RE = re.compile(r"(error|failed|failure|traceback|exception|not found|エラー|失敗)", re.I)
_ERROR_WORDS = ("error", "failed", "failure", "traceback", "exception", "not found", "エラー",
                "失敗")


def _texts(message: Message) -> list[str]:
    return [b.get("text", "") for b in content_blocks(message)
            if b.get("type") == "text" and b.get("text", "").strip()]


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|(?<=。)|\n+", text) if s.strip()]


def _unique(items: list[str]) -> list[str]:
    seen: set[str] = set()
    return [i for i in items if not (i in seen or seen.add(i))]


def _task(ms: list[Message]) -> list[str]:
    return ["\n".join(_texts(ms[0])) or "(no text in the first message)"]


def _user_instructions(ms: list[Message]) -> list[str]:
    return ["- " + t for m in ms[1:] if m.get("role") == "user" for t in _texts(m)]


def _assistant_sentences(ms: list[Message]) -> list[str]:
    return [s for m in ms if m.get("role") == "assistant" for t in _texts(m)
            for s in _sentences(t)]


def _decisions(newest: int | None) -> Callable[[list[Message]], list[str]]:
    def run(ms: list[Message]) -> list[str]:
        found = _unique(["- " + s for s in _assistant_sentences(ms) if _DECISION_RE.search(s)])
        return found if newest is None else found[-newest:]
    return run


def _identifiers(ms: list[Message]) -> list[str]:
    found: dict[str, None] = {}  # the unique identifiers, first appearance first
    for m in ms:
        for b in content_blocks(m):
            if len(found) >= 60:  # the first 60 are known: later blocks cannot change them
                break
            text = b.get("text") if b.get("type") == "text" else (
                tool_result_text(b) if b.get("type") == "tool_result" else
                " ".join(str(v) for v in (b.get("input") or {}).values())
                if b.get("type") == "tool_use" else "")
            found.update(dict.fromkeys(_paths_and_symbols(text or "")))
    return ["- " + i for i in list(found)[:60]]


def _numbers(ms: list[Message]) -> list[str]:
    return _unique(["- " + s for m in ms for t in _texts(m) for s in _sentences(t)
                    if _NUMBER_RE.search(s)])


def _problems(newest: int | None) -> Callable[[list[Message]], list[str]]:
    """Error lines of tool results: the first of each result, newest ``newest``; with None,
    every error line of every result."""
    def run(ms: list[Message]) -> list[str]:
        lines = []
        for m in ms:
            for b in content_blocks(m):
                if b.get("type") == "tool_result":
                    # a match never spans lines: a text naming no error has no error line
                    text = tool_result_text(b)
                    bad = [ln.strip() for ln in text.splitlines()
                           if names_a_word(ln, _ERROR_WORDS, _ERROR_RE)] \
                        if names_a_word(text, _ERROR_WORDS, _ERROR_RE) else []
                    lines += ["- " + ln for ln in (bad if newest is None else bad[:1])]
        lines = _unique(lines)
        return lines if newest is None else lines[-newest:]
    return run


def _state(ms: list[Message]) -> list[str]:
    said = _assistant_sentences(ms)
    calls = sum(1 for m in ms for b in content_blocks(m) if b.get("type") == "tool_use")
    return [f"- {calls} tool calls so far.", *(["- Last: " + said[-1]] if said else [])]


def _next(ms: list[Message]) -> list[str]:
    last = next((t for m in reversed(ms) if m.get("role") == "assistant" for t in _texts(m)), "")
    return ["- " + s for s in _sentences(last) if _NEXT_RE.search(s)][-3:]


def _extractor(heading: str, description: str) -> Callable[[list[Message]], list[str]] | None:
    h, every = heading.lower(), "every" in description.lower()
    if "instruction" in h:
        return _user_instructions
    if "number" in h:
        return _numbers
    if "task" in h:
        return _task
    if "decision" in h:
        return _decisions(None if "first" in description.lower() else 12)
    if "identifier" in h:
        return _identifiers
    if "problem" in h:
        return _problems(None if every else 6)
    if "state" in h:
        return _state
    if "next" in h:
        return _next
    return None


def prompt_sections(prompt: str) -> list[tuple[str, str]]:
    """List the sections a summary prompt asks for.

    Args:
        prompt: a summary prompt with ``## Heading`` lines, each followed by its description.

    Returns:
        ``(heading, description)`` for each ``## Heading`` line, in order.

    >>> prompt_sections("intro\\n## Task\\nThe request.\\n## Next steps\\nWhat comes next.")
    [('Task', 'The request.'), ('Next steps', 'What comes next.')]
    """
    out, current, lines = [], None, []
    for line in prompt.splitlines():
        if line.startswith("## "):
            if current is not None:
                out.append((current, " ".join(lines).strip()))
            current, lines = line[3:].strip(), []
        elif current is not None and line.strip():
            lines.append(line.strip())
    if current is not None:
        out.append((current, " ".join(lines).strip()))
    return out


def prompt_summary(messages: list[Message], prompt: str) -> str:
    """Summarise ``messages`` offline by filling each section the prompt asks for.

    Args:
        messages: the part to summarise; never mutated.
        prompt: a summary prompt with ``## Section`` headings, each followed by its description.

    Returns:
        The summary, ``## Heading`` blocks in the prompt's order.

    Raises:
        ValueError: an empty history or a prompt without sections.
    """
    if not messages:
        raise ValueError("prompt_summary needs at least one message")
    sections = prompt_sections(prompt)
    if not sections:
        raise ValueError("the prompt has no '## Section' headings to fill")
    parts = []
    for heading, description in sections:
        extract = _extractor(heading, description)
        body = extract(list(messages)) if extract else ["(not extracted offline)"]
        parts.append(f"## {heading}\n" + ("\n".join(body) if body else "- (none)"))
    return "\n".join(parts)


def prompt_summarizer(prompt: str = REVISED_SUMMARY_PROMPT) -> Callable[[list[Message]], str]:
    """Make a summariser for the summary policies that follows ``prompt`` offline.

    Args:
        prompt: the summary prompt (default :data:`REVISED_SUMMARY_PROMPT`).

    Returns:
        ``summarize(messages) -> str`` calling :func:`prompt_summary`.
    """
    return lambda messages: prompt_summary(messages, prompt)


LAB_PROMPTS = (("kit summary (structured_summary)", None), ("original prompt", "original"),
               ("revised prompt", "revised"), ("revised, shorter", "short"))
"""The rows of the lab's before/after table: the kit's offline summary as shipped, then the
prompt-following summariser on each prompt."""


def lab_rows() -> list[dict]:
    """Run the lab on both kit conversations: per summary, facts kept and summary length.

    Returns:
        ``[{"summary": str, "conversation": "en" | "ja", "kept": int, "total": int,
        "summary_chars": int, "lost": [fact texts]}]`` in :data:`LAB_PROMPTS` order.
    """
    from mini_agent.core.compaction import SUMMARY_PROMPT, summary_message
    from mini_agent.core.retention import retained_facts
    from mini_agent.core.structured_summary import structured_summary
    from mini_agent.core.sample_conversations import english_conversation, japanese_conversation

    prompts = {"original": SUMMARY_PROMPT, "revised": REVISED_SUMMARY_PROMPT,
               "short": SHORT_SUMMARY_PROMPT}
    rows = []
    for label, key in LAB_PROMPTS:
        for lang, build in (("en", english_conversation), ("ja", japanese_conversation)):
            messages, facts = build()
            summary = structured_summary(messages) if key is None else \
                prompt_summary(messages, prompts[key])
            kept = retained_facts([summary_message(summary)], facts)
            rows.append({"summary": label, "conversation": lang, "kept": sum(kept),
                         "total": len(facts), "summary_chars": len(summary),
                         "lost": [f.text for f, k in zip(facts, kept) if not k]})
    return rows


def format_lab_table(rows: list[dict]) -> str:
    """Format the lab's before/after table.

    Args:
        rows: :func:`lab_rows`'s output.

    Returns:
        One line per summary: facts kept out of the total and summary length in characters,
        for the English and the Japanese conversation, under a header line.
    """
    head = f"{'summary':<34}{'en kept':>8}{'en chars':>10}{'ja kept':>9}{'ja chars':>10}"
    lines = [head, "-" * len(head)]
    for label, _ in LAB_PROMPTS:
        en = next(r for r in rows if r["summary"] == label and r["conversation"] == "en")
        ja = next(r for r in rows if r["summary"] == label and r["conversation"] == "ja")
        lines.append(f"{label:<34}{en['kept']:>5}/{en['total']:<2}{en['summary_chars']:>10,}"
                     f"{ja['kept']:>6}/{ja['total']:<2}{ja['summary_chars']:>10,}")
    return "\n".join(lines)
