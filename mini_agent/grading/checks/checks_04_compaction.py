"""Graded checks for exercise 04 (micro_compact, context_collapse); ``impl`` is the module.

The same checks run against the package (``from mini_agent import micro_compact,
context_collapse``). Typical mistakes caught: clearing run_bash, write or unknown tools'
results; clearing at exactly ``max_age_seconds``; ignoring ``max_age_seconds`` or
``clearable_tools``; the age taken from the tool_use's message; only the first result of a
message cleared, or results paired with tool_use blocks by position; dropping keys of the
cleared block; mutating the input; ``zip`` silently cutting misaligned times; crashing on
string content. For the collapse: losing the task or its non-text blocks, the notice as a
message of its own, a cut at a user message (a tool_result loses its tool_use: the API's 400),
a cut off by one or rounded the wrong way, ``cut == 1``, a str task turned into a list of
characters, mutating the task, returning the input list itself, no error for a negative
``keep_last``. Outputs are longer than ``CLEARED`` throughout (the kit's own version keeps
shorter ones, which the exercise does not ask).

Source: exercise 04 (``solutions/04_compaction.py``) and its seed, section 3 of
002_4516104fd432e704.txt (the cheap stages: clear old tool results, collapse the middle).
"""

from __future__ import annotations

from mini_agent import MessageValidationError, validate_messages
from mini_agent.grading import check
from mini_agent.grading.checks._report import (
    called, expect, expect_raises, snapshot, unchanged)

CLEARED = "[Old tool result content cleared]"
NOTICE = ("[Earlier conversation collapsed to save context. The task above is the original "
          "request; re-read files or re-run commands if you need details from before this "
          "point.]")
T0 = 1_767_225_600.0
HOUR = 3600.0
OUTPUT = "\n".join(f"line {k} of a long tool output, まだ必要かもしれない" for k in range(40))
TASK = "Fix the failing test in src/app.py."


def session(names: list[str], task=TASK) -> list[dict]:
    """Build a history: the task, then one tool_use/tool_result exchange per tool name.

    Args:
        names: the tool of each exchange, oldest first; ids are ``toolu_<k:02d>``.
        task: the first user message's content (default :data:`TASK`).

    Returns:
        The messages; every result's content is :data:`OUTPUT`.
    """
    messages = [{"role": "user", "content": task}]
    for k, name in enumerate(names, 1):
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Step {k}: calling {name}."},
            {"type": "tool_use", "id": f"toolu_{k:02d}", "name": name,
             "input": {"path": f"src/f{k}.py"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{k:02d}", "content": OUTPUT,
             "is_error": False}]})
    return messages


def parallel_session() -> list[dict]:
    """Build a history whose results share one user message, answered in another order.

    The task; one assistant message with three tool_use blocks (read_file, run_bash, grep)
    answered in ONE user message in another order (run_bash, grep, read_file), with list-shaped
    content for grep; then a user follow-up with string content and a last read_file.

    Returns:
        The messages.
    """
    return [
        {"role": "user", "content": TASK},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Three calls at once."},
            {"type": "tool_use", "id": "t_read", "name": "read_file", "input": {"path": "a.py"}},
            {"type": "tool_use", "id": "t_bash", "name": "run_bash", "input": {"command": "ls"}},
            {"type": "tool_use", "id": "t_grep", "name": "grep", "input": {"pattern": "x"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t_bash", "content": OUTPUT},
            {"type": "tool_result", "tool_use_id": "t_grep", "content": [
                {"type": "text", "text": OUTPUT}, {"type": "text", "text": "2 matches"}]},
            {"type": "tool_result", "tool_use_id": "t_read", "content": OUTPUT,
             "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "Note: the CI runs Python 3.11."}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Which file next?"}]},
        {"role": "user", "content": "Look at src/設定.py next."},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t_last", "name": "read_file",
             "input": {"path": "src/設定.py"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t_last", "content": OUTPUT}]},
    ]


def contents(view: list[dict], index: int) -> list:
    """Read the contents of the tool_result blocks of one message.

    Args:
        view: a history or a view of it.
        index: the message's position.

    Returns:
        The ``content`` of each tool_result block of ``view[index]``, in block order.
    """
    return [b.get("content") for b in view[index]["content"] if b.get("type") == "tool_result"]


def compacted(impl, messages, what, **kwargs):
    """Call ``micro_compact(messages, **kwargs)``; fail if messages or times were changed.

    Args:
        impl: the implementation under test.
        messages: the history to compact.
        what: the input, described briefly for a failure message.
        kwargs: passed on (``times``, ``now``, ``max_age_seconds``, ``clearable_tools``).

    Returns:
        The view, which has as many messages as the input.

    Raises:
        AssertionError: the call raised, changed its input, or returned another length.
    """
    before = snapshot(messages, kwargs.get("times"))
    view = called(lambda: impl.micro_compact(messages, **kwargs), f"micro_compact({what})")
    unchanged(before, messages, kwargs.get("times"), what=f"micro_compact({what})",
              names=("messages", "times"))
    expect(len(view), len(messages), f"len(micro_compact({what}))")
    return view


def collapsed(impl, messages, what, **kwargs):
    """Call ``context_collapse(messages, **kwargs)``; fail on a changed input or an invalid view.

    Args:
        impl: the implementation under test.
        messages: the history to collapse.
        what: the input, described briefly for a failure message.
        kwargs: passed on (``keep_last``).

    Returns:
        The view, which passes :func:`validate_messages`.

    Raises:
        AssertionError: the call raised, changed ``messages``, or broke an API rule.
    """
    before = snapshot(messages)
    view = called(lambda: impl.context_collapse(messages, **kwargs), f"context_collapse({what})")
    unchanged(before, messages, what=f"context_collapse({what})", names=("messages",))
    try:
        validate_messages(view)
    except MessageValidationError as exc:
        raise AssertionError(f"context_collapse({what}): expected a valid request, got "
                             f"{exc}") from None
    return view


def expect_tail(view, messages, cut, what):
    """Assert ``view[1:] == messages[cut:]``, said as the cut index when the lengths differ.

    Args:
        view: what ``context_collapse`` returned (the task first).
        messages: the history it was given.
        cut: the index the exercise's rule puts the cut at.
        what: the input, described briefly for a failure message.

    Raises:
        AssertionError: the view keeps another tail.
    """
    kept = len(view) - 1
    if kept != len(messages) - cut:
        got = (f"the {len(messages)} messages unchanged" if view == messages else
               f"a view of {len(view)} messages, as if cut at {len(messages) - kept}"
               if 0 <= kept < len(messages) else f"a view of {len(view)} messages")
        raise AssertionError(f"{what}: expected the cut at {cut} (view[1:] == messages[{cut}:]),"
                             f" got {got}")
    expect(view[1:], messages[cut:], f"{what}, view[1:]")


# --------------------------------------------------------------------------- 04.1 micro_compact

@check(points=2, hint="Clear a tool_result when it is older than the cut-off AND its tool "
                      "(found through the tool_use with the same id) is clearable; keep every "
                      "other key of the block.")
def check_clears_old_read_only_results(impl):
    h = session(["read_file", "list_dir", "grep", "glob", "web_fetch"])
    view = compacted(impl, h, "read_file, list_dir, grep, glob, web_fetch results 2 h old",
                     times=[T0] * len(h), now=T0 + 2 * HOUR)
    for i in (2, 4, 6, 8, 10):
        expect(view[i]["content"][0], {"type": "tool_result", "tool_use_id": f"toolu_{i // 2:02d}",
                                       "content": CLEARED, "is_error": False},
               f"micro_compact(5 read-only results 2 h old), message {i}")


@check(points=2, hint="run_bash output records side effects, write results record writes, and "
                      "a tool you do not know may do anything: clear only clearable tools.")
def check_keeps_other_tools_results(impl):
    h = session(["run_bash", "edit_file", "write_file", "deploy", "read_file"])
    view = compacted(impl, h, "run_bash, edit_file, write_file, deploy, read_file 2 h old",
                     times=[T0] * len(h), now=T0 + 2 * HOUR)
    expect([contents(view, i)[0] for i in (2, 4, 6, 8, 10)],
           [OUTPUT, OUTPUT, OUTPUT, OUTPUT, CLEARED],
           "results of run_bash, edit_file, write_file, deploy, read_file, 2 h old")


@check(points=1, hint="The age of a result is now - times[i] for ITS message, compared with "
                      "`>`: a result exactly max_age_seconds old stays.")
def check_age_boundary(impl):
    h = session(["read_file", "read_file", "read_file"])
    times = [T0 - 10, T0, T0, T0, T0 + 2, T0 + 1, T0 + 1]
    view = compacted(impl, h, "3 read_file results 3601, 3599 and 3600 s old",
                     times=times, now=T0 + 1 + HOUR)
    expect([contents(view, i)[0] for i in (2, 4, 6)], [CLEARED, OUTPUT, OUTPUT],
           "read_file results 3601 s, 3599 s (its tool_use: 3601 s) and exactly 3600 s old")
    view = compacted(impl, h, "3 read_file results 3602, 3600 and 3601 s old",
                     times=times, now=T0 + 2 + HOUR)
    expect([contents(view, i)[0] for i in (2, 4, 6)], [CLEARED, OUTPUT, CLEARED],
           "read_file results 3602 s, exactly 3600 s and 3601 s old")


@check(points=2, hint="One user message can answer several tool_use blocks, in any order: "
                      "look each result up by its tool_use_id, never by its position.")
def check_several_results_in_one_message(impl):
    h = parallel_session()
    view = compacted(impl, h, "run_bash, grep, read_file results in one message, 2 h old",
                     times=[T0] * len(h), now=T0 + 2 * HOUR)
    expect(contents(view, 2), [OUTPUT, CLEARED, CLEARED],
           "results of run_bash, grep (list content), read_file in one message, 2 h old "
           "(asked as read_file, run_bash, grep)")
    expect(view[2]["content"][2], {"type": "tool_result", "tool_use_id": "t_read",
                                   "content": CLEARED, "cache_control": {"type": "ephemeral"}},
           "the cleared read_file result (with cache_control)")
    expect(view[2]["content"][3], h[2]["content"][3], "the user text after the results")
    expect(view[4], h[4], "the user follow-up with string content")
    expect(contents(view, 6), [CLEARED], "the last read_file result, 2 h old")


@check(points=2, hint="Honour the arguments you are given: max_age_seconds and clearable_tools "
                      "replace the defaults.")
def check_parameters(impl):
    h = session(["read_file", "run_bash", "grep"])
    times = [T0] * len(h)
    view = compacted(impl, h, "results 61 s old, max_age_seconds=60", times=times,
                     now=T0 + 61, max_age_seconds=60)
    expect([contents(view, i)[0] for i in (2, 4, 6)], [CLEARED, OUTPUT, CLEARED],
           "read_file, run_bash, grep 61 s old, max_age_seconds=60")
    view = compacted(impl, h, "results 2 h old, max_age_seconds=3 * 3600", times=times,
                     now=T0 + 2 * HOUR, max_age_seconds=3 * HOUR)
    expect([contents(view, i)[0] for i in (2, 4, 6)], [OUTPUT, OUTPUT, OUTPUT],
           "read_file, run_bash, grep 2 h old, max_age_seconds=10800")
    tools = frozenset({"run_bash"})
    view = compacted(impl, h, "2 h old, clearable_tools={'run_bash'}", times=times,
                     now=T0 + 2 * HOUR, clearable_tools=tools)
    expect([contents(view, i)[0] for i in (2, 4, 6)], [OUTPUT, CLEARED, OUTPUT],
           "read_file, run_bash, grep 2 h old, clearable_tools=frozenset({'run_bash'})")


@check(points=1, hint="Build new dicts ({**block, ...}) and new lists instead of assigning into "
                      "the input; a message with string content stays as it is.",
       guards_input=True)
def check_micro_compact_does_not_mutate(impl):
    h = parallel_session()
    view = compacted(impl, h, "7 messages, every result 3 h old", times=[T0] * len(h),
                     now=T0 + 3 * HOUR)
    assert view is not h, "micro_compact(7 messages): expected a new list, got the input list"
    h = session(["read_file", "grep"])
    compacted(impl, h, "read_file and grep 1 h + 1 s old", times=[T0] * len(h),
              now=T0 + HOUR + 1)


@check(points=1, hint="times must be parallel to messages; refuse a mismatch with ValueError "
                      "(zip would silently drop messages).")
def check_misaligned_times_raise(impl):
    h = session(["read_file"])
    for times in ([T0], [T0] * 2, [T0] * 4):
        expect_raises(ValueError, lambda: impl.micro_compact(h, times=times, now=T0 + 9999),
                      f"micro_compact(3 messages, {len(times)} times)")


# --------------------------------------------------------------------------- 04.2 collapse

@check(points=2, hint="The first user message is the task: keep all of its content (string "
                      "or blocks), then append NOTICE as one more text block.")
def check_collapse_keeps_the_task(impl):
    h = session(["read_file", "grep", "run_bash", "glob", "read_file"])
    view = collapsed(impl, h, "11 messages, keep_last=4", keep_last=4)
    expect(view[0], {"role": "user", "content": [{"type": "text", "text": TASK},
                                                 {"type": "text", "text": NOTICE}]},
           "view[0] of context_collapse(task as a string, keep_last=4)")
    image = {"type": "image", "source": {"type": "url", "url": "https://example.com/bug.png"}}
    task = [{"type": "text", "text": "このテストを直して"}, image]
    view = collapsed(impl, session(["read_file"] * 5, task=task), "task [text, image]",
                     keep_last=4)
    expect(view[0], {"role": "user", "content": [*task, {"type": "text", "text": NOTICE}]},
           "view[0] of context_collapse(task [Japanese text, image], keep_last=4)")


@check(points=3, hint="Cut at the LATEST assistant message at or before len - keep_last: it "
                      "keeps at least keep_last messages, and a tool_result never loses its "
                      "tool_use.")
def check_collapse_cut_point(impl):
    h = session(["read_file", "grep", "run_bash", "glob", "read_file", "grep"])  # 13 messages
    expected_cuts = {0: 11, 1: 11, 2: 11, 3: 9, 4: 9, 5: 7, 6: 7, 7: 5, 8: 5, 9: 3, 10: 3}
    for keep_last, cut in expected_cuts.items():
        view = collapsed(impl, h, f"13 messages, keep_last={keep_last}", keep_last=keep_last)
        expect_tail(view, h, cut, f"context_collapse(13 messages, keep_last={keep_last})")


@check(points=1, hint="Messages without tools count too: a cut may land on an assistant "
                      "message that only talks, never on a user message.")
def check_collapse_with_a_busy_history(impl):
    h = parallel_session() + [
        {"role": "assistant", "content": [{"type": "text", "text": "Fixed: see the diff."}]},
        {"role": "user", "content": "Thanks. Now run the tests."}]  # 9 messages
    for keep_last, cut in {2: 7, 3: 5, 4: 5, 5: 3, 6: 3}.items():
        view = collapsed(impl, h, f"9 messages, keep_last={keep_last}", keep_last=keep_last)
        expect_tail(view, h, cut, f"context_collapse(9 messages with 3 tools in one turn, "
                                  f"keep_last={keep_last})")


@check(points=1, hint="Nothing to collapse (no assistant message to cut at after index 1): "
                      "return a new list equal to the input.")
def check_collapse_short_history_unchanged(impl):
    for names, keep_last in ((["read_file"], 2), (["read_file", "grep"], 3),
                             (["read_file"] * 6, 11), (["read_file"] * 6, 40)):
        h = session(names)
        view = collapsed(impl, h, f"{len(h)} messages, keep_last={keep_last}",
                         keep_last=keep_last)
        expect(view, h, f"context_collapse({len(h)} messages, keep_last={keep_last})")
        assert view is not h, (f"context_collapse({len(h)} messages, keep_last={keep_last}): "
                               "expected a new list, got the input list itself")


@check(points=1, hint="The default keep_last is 4.")
def check_collapse_default_keep_last(impl):
    h = session(["read_file", "grep", "run_bash", "glob", "read_file", "grep"])
    view = collapsed(impl, h, "13 messages, default keep_last")
    expect_tail(view, h, 9, "context_collapse(13 messages), default keep_last")


@check(points=1, hint="Raise ValueError for a negative keep_last instead of guessing.")
def check_collapse_negative_keep_last_raises(impl):
    h = session(["read_file"] * 4)
    for keep_last in (-1, -2):
        expect_raises(ValueError, lambda: impl.context_collapse(h, keep_last=keep_last),
                      f"context_collapse(9 messages, keep_last={keep_last})")
