"""MUTANT (wrong on purpose): Builds a fresh tool_result with tool_use_id and content only, dropping is_error and cache_control; exposed by a read_file result with is_error=False.

Exercise 04: multi-stage compaction (notebooks/04_compaction.ipynb).

Build the two cheap stages of seed 002 (section 3; see docs/sources.md) yourself:

* 04.1 ``micro_compact(messages, *, times, now, ...)``: clear old results of re-fetchable
  read-only tools (read_file, list_dir, grep, glob, web_fetch), never run_bash or write tools;
* 04.2 ``context_collapse(messages, *, keep_last)``: replace the early conversation with one
  fixed notice, keeping the task (first user message) and cutting only where no ``tool_use``
  is separated from its ``tool_result``.

Messages are plain Anthropic ``MessageParam`` dicts, oldest first::

    {"role": "user" | "assistant", "content": str | list[block]}
    {"type": "tool_use", "id": str, "name": str, "input": dict}
    {"type": "tool_result", "tool_use_id": str, "content": str | list[block]}

``times[i]`` is when ``messages[i]`` arrived (Unix seconds): it lives BESIDE the messages; the
API refuses unknown keys inside blocks. Grade with ``mini-agent grade 04``. The kit's own
version is ``mini_agent.core.compaction``; read it after you pass, not before.
"""

from __future__ import annotations

from mini_agent.core.messages import tool_names_by_id

CLEARED = "[Old tool result content cleared]"
CLEARABLE_TOOLS = frozenset({
    "read_file", "list_dir", "grep", "glob", "web_fetch",   # the kit's names
    "Read", "LS", "Grep", "Glob", "WebFetch",               # Claude Code's (real transcripts)
})
NOTICE = ("[Earlier conversation collapsed to save context. The task above is the original "
          "request; re-read files or re-run commands if you need details from before this "
          "point.]")


def micro_compact(messages: list[dict], *, times: list[float], now: float,
                  max_age_seconds: float = 3600,
                  clearable_tools: frozenset = CLEARABLE_TOOLS) -> list[dict]:
    """Replace the content of old tool results of clearable tools with ``CLEARED``.

    A ``tool_result`` in ``messages[i]`` is cleared when ``now - times[i] > max_age_seconds``
    (exactly ``max_age_seconds`` old is kept) and the tool that produced it (look it up by
    ``tool_use_id`` in the assistant ``tool_use`` blocks: ``tool_names_by_id``) is in
    ``clearable_tools``. One user message may hold several results, in any order; each is
    judged on its own. The cleared block keeps every key; only ``"content"`` changes (string
    or list content alike). Everything else is kept as it is.
    Return a NEW list of the same length; never mutate ``messages``, ``times`` or the blocks.
    (The kit's own version also keeps a result shorter than ``CLEARED``; you need not.)
    Raises: ValueError if ``len(times) != len(messages)``.
    """
    if len(times) != len(messages):
        raise ValueError("times must be parallel to messages")
    names = tool_names_by_id(messages)
    view = []
    for message, when in zip(messages, times):
        content = message["content"]
        if message["role"] != "user" or isinstance(content, str) or now - when <= max_age_seconds:
            view.append(message)
            continue
        new_content = []
        for block in content:
            if (block.get("type") == "tool_result"
                    and names.get(block["tool_use_id"]) in clearable_tools):
                block = {"type": "tool_result", "tool_use_id": block["tool_use_id"],
                         "content": CLEARED}
            new_content.append(block)
        view.append({**message, "content": new_content})
    return view


def context_collapse(messages: list[dict], *, keep_last: int = 4) -> list[dict]:
    """Keep the task and about the last ``keep_last`` messages; the rest becomes ``NOTICE``.

    The view is ``[task + NOTICE, *messages[cut:]]``: the first message (the task, a user
    message) gets a text block ``NOTICE`` appended (its content turned into a block list), and
    ``cut`` is the LATEST index ``<= len(messages) - keep_last`` where ``messages[cut]`` is an
    assistant message (so roles alternate and every tool_result still follows its tool_use).
    If no such ``cut > 1`` exists, return a copy of ``messages`` unchanged.
    Return a NEW list; never mutate the input (nor the task's content list).
    Raises: ValueError if ``keep_last < 0``.
    """
    if keep_last < 0:
        raise ValueError(f"keep_last must be >= 0, got {keep_last}")
    limit = len(messages) - keep_last
    cuts = [i for i in range(2, len(messages))
            if i <= limit and messages[i]["role"] == "assistant"]
    if not cuts:
        return list(messages)
    task = messages[0]
    content = task["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    head = {"role": "user", "content": blocks + [{"type": "text", "text": NOTICE}]}
    return [head, *messages[cuts[-1]:]]
