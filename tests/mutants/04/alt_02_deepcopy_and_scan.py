"""ALTERNATIVE (correct, written differently): a deep copy edited in place, a forward scan remembering the last good cut.

Exercise 04: multi-stage compaction (notebooks/04_compaction.ipynb).
"""

from __future__ import annotations

import copy

CLEARED = "[Old tool result content cleared]"
CLEARABLE_TOOLS = frozenset({"read_file", "list_dir", "grep", "glob", "web_fetch",
                             "Read", "LS", "Grep", "Glob", "WebFetch"})
NOTICE = ("[Earlier conversation collapsed to save context. The task above is the original "
          "request; re-read files or re-run commands if you need details from before this "
          "point.]")


def micro_compact(messages, *, times, now, max_age_seconds=3600,
                  clearable_tools=CLEARABLE_TOOLS):
    times = list(times)
    if len(times) != len(messages):
        raise ValueError("times and messages differ in length")
    tool_of = {}
    for message in messages:
        if message["role"] == "assistant" and not isinstance(message["content"], str):
            for block in message["content"]:
                if block["type"] == "tool_use":
                    tool_of[block["id"]] = block["name"]
    view = copy.deepcopy(messages)
    for index, message in enumerate(view):
        if message["role"] == "assistant" or isinstance(message["content"], str):
            continue
        if not now - times[index] > max_age_seconds:
            continue
        for block in message["content"]:
            if block["type"] != "tool_result":
                continue
            if tool_of.get(block["tool_use_id"]) in clearable_tools:
                block["content"] = CLEARED
    return view


def context_collapse(messages, *, keep_last=4):
    if keep_last < 0:
        raise ValueError(f"keep_last={keep_last}")
    best = None
    for index, message in enumerate(messages):
        if index > len(messages) - keep_last:
            break
        if index >= 2 and message["role"] == "assistant":
            best = index
    if best is None:
        return [*messages]
    first = messages[0]
    blocks = (list(first["content"]) if isinstance(first["content"], list)
              else [{"type": "text", "text": first["content"]}])
    return [{"role": "user", "content": blocks + [{"type": "text", "text": NOTICE}]},
            *messages[best:]]
