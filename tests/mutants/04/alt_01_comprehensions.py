"""ALTERNATIVE (correct, written differently): comprehensions, a name table built by hand, a backward search for the cut.

Exercise 04: multi-stage compaction (notebooks/04_compaction.ipynb).
"""

from __future__ import annotations

CLEARED = "[Old tool result content cleared]"
CLEARABLE_TOOLS = frozenset({"read_file", "list_dir", "grep", "glob", "web_fetch",
                             "Read", "LS", "Grep", "Glob", "WebFetch"})
NOTICE = ("[Earlier conversation collapsed to save context. The task above is the original "
          "request; re-read files or re-run commands if you need details from before this "
          "point.]")


def _tool_names(messages):
    return {block["id"]: block["name"]
            for message in messages if message["role"] == "assistant"
            and isinstance(message["content"], list)
            for block in message["content"] if block.get("type") == "tool_use"}


def micro_compact(messages, *, times, now, max_age_seconds=3600,
                  clearable_tools=CLEARABLE_TOOLS):
    if len(messages) != len(times):
        raise ValueError(f"{len(times)} times for {len(messages)} messages")
    names = _tool_names(messages)

    def clear(block, old):
        if (old and block.get("type") == "tool_result"
                and names.get(block.get("tool_use_id")) in clearable_tools):
            return {**block, "content": CLEARED}
        return block

    return [message if message["role"] != "user" or isinstance(message["content"], str)
            else {**message, "content": [clear(b, now - when > max_age_seconds)
                                         for b in message["content"]]}
            for message, when in zip(messages, times)]


def context_collapse(messages, *, keep_last=4):
    if keep_last < 0:
        raise ValueError("keep_last must not be negative")
    cut = min(len(messages) - keep_last, len(messages) - 1)
    while cut > 1 and messages[cut]["role"] != "assistant":
        cut -= 1
    if cut <= 1:
        return messages[:]
    task = messages[0]["content"]
    head = [{"type": "text", "text": task}] if isinstance(task, str) else [*task]
    head.append({"type": "text", "text": NOTICE})
    return [{"role": "user", "content": head}] + messages[cut:]
