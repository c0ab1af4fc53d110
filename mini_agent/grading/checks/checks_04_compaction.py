"""Graded checks for exercise 04 (micro_compact, context_collapse); ``impl`` is the module.

Each check targets one typical mistake: clearing run_bash or write results, clearing at
exactly 60 minutes, dropping keys of the cleared block, mutating the input, ignoring misaligned
times, losing the task statement, and cutting the collapse where a tool_result loses its
tool_use (the API answers 400).
"""

from __future__ import annotations

import copy

from mini_agent.grading import check
from mini_agent.core.messages import validate_messages

T0 = 1_767_225_600.0
OUTPUT = "\n".join(f"line {k} of a long tool output" for k in range(40))


def session(names: list[str]) -> list[dict]:
    """Task, then one tool_use/tool_result exchange per tool name."""
    messages = [{"role": "user", "content": "Fix the failing test in src/app.py."}]
    for k, name in enumerate(names, 1):
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Step {k}: calling {name}."},
            {"type": "tool_use", "id": f"toolu_{k:02d}", "name": name,
             "input": {"path": f"src/f{k}.py"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{k:02d}", "content": OUTPUT,
             "is_error": False}]})
    return messages


def result(view: list[dict], index: int) -> dict:
    return view[index]["content"][0]


@check(points=2, hint="Clear a tool_result when it is older than the cut-off AND its tool "
                      "(found via the tool_use with the same id) is clearable.")
def check_clears_old_read_only_results(impl):
    h = session(["read_file", "grep", "glob"])
    view = impl.micro_compact(h, times=[T0] * len(h), now=T0 + 2 * 3600)
    for i in (2, 4, 6):
        assert result(view, i) == {"type": "tool_result", "tool_use_id": f"toolu_{i // 2:02d}",
                                   "content": impl.CLEARED, "is_error": False}, \
            f"message {i}: expected the content cleared and every other key kept"


@check(points=2, hint="run_bash output records side effects and edit results record writes: "
                      "only re-fetchable read-only tools may be cleared.")
def check_keeps_run_bash_and_write_results(impl):
    h = session(["run_bash", "edit_file", "read_file"])
    view = impl.micro_compact(h, times=[T0] * len(h), now=T0 + 2 * 3600)
    assert result(view, 2)["content"] == OUTPUT, "a run_bash result was cleared"
    assert result(view, 4)["content"] == OUTPUT, "an edit_file result was cleared"
    assert result(view, 6)["content"] == impl.CLEARED


@check(points=1, hint="Compare the age with `>`: a result exactly 60 minutes old stays.")
def check_sixty_minute_boundary(impl):
    h = session(["read_file", "read_file"])
    times = [T0, T0, T0, T0 + 1, T0 + 1]
    view = impl.micro_compact(h, times=times, now=T0 + 3601)
    assert result(view, 2)["content"] == impl.CLEARED, "3601 s old: should be cleared"
    assert result(view, 4)["content"] == OUTPUT, "exactly 3600 s old: should be kept"


@check(points=1, hint="Build new dicts ({**block, ...}) instead of assigning into the input.")
def check_micro_compact_does_not_mutate(impl):
    h = session(["read_file", "grep"])
    before = copy.deepcopy(h)
    impl.micro_compact(h, times=[T0] * len(h), now=T0 + 9999)
    assert h == before, "the input history was changed"


@check(points=1, hint="times must be parallel to messages; refuse a mismatch with ValueError.")
def check_misaligned_times_raise(impl):
    h = session(["read_file"])
    try:
        impl.micro_compact(h, times=[T0], now=T0 + 9999)
    except ValueError:
        return
    raise AssertionError("no ValueError for 1 time and 3 messages")


@check(points=2, hint="The first user message is the task: keep its text, then add NOTICE.")
def check_collapse_keeps_the_task(impl):
    h = session(["read_file", "grep", "run_bash", "glob", "read_file"])
    view = impl.context_collapse(h, keep_last=4)
    texts = [b["text"] for b in view[0]["content"] if b["type"] == "text"]
    assert texts[0] == "Fix the failing test in src/app.py.", "the task statement was lost"
    assert texts[-1] == impl.NOTICE
    assert view[-4:] == h[-4:] and len(view) == 5


@check(points=3, hint="Cut only where messages[cut] is an assistant message: a kept "
                      "tool_result whose tool_use was cut away is a 400 from the API.")
def check_collapse_cut_keeps_tool_pairs(impl):
    h = session(["read_file", "grep", "run_bash", "glob", "read_file", "grep"])
    for keep_last in range(1, len(h) + 1):
        view = impl.context_collapse(h, keep_last=keep_last)
        validate_messages(view)
        assert len(view) <= len(h)


@check(points=1, hint="Nothing to collapse (no assistant message to cut at after index 1): "
                      "return a copy unchanged, without mutating the input.")
def check_collapse_short_history_unchanged(impl):
    h = session(["read_file"])
    before = copy.deepcopy(h)
    assert impl.context_collapse(h, keep_last=2) == before
    assert h == before
