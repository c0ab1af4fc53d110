"""Graded checks for exercise 08 (tiers, timeline lines, eviction order); ``impl`` is the module.

The same checks run against the package (``from mini_agent import ...``). Typical mistakes
caught: off-by-one tier boundaries, a threshold parameter ignored or with the wrong default, no
ValueError for a negative age; local time instead of UTC (the checks set a time zone other
than UTC, ``TZ=Asia/Tokyo``, while they run, so a grader on a UTC machine sees it too), a
12-hour clock, minutes rounded instead of cut; lines counted with ``splitlines()`` (a trailing
newline, U+2028) instead of newlines + 1; the result of the first tool_result instead of the
one answering the first tool_use when several tools ran in one message; the last tool_use;
``pattern`` before ``path``; the reasoning taken from the wrong block or longer than its first
line; the exchange changed in place; the cold store ordered by timestamp (ties reorder, a
stepped-back clock evicts the wrong segment), newest first, or sorted in place.

Source: exercise 08 (``solutions/08_context_lifecycle.py``) and its seed,
003_85ccd58041fa7231.txt (four tiers by age, the timeline line
``[14:30] read_file (seg-047): src/app.py 120 lines; found bug``, the cold store evicted
oldest first).
"""

from __future__ import annotations

import contextlib
import copy
import os
import time

from mini_agent.grading import check
from mini_agent.grading.checks._report import InputChanged

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
ZONE = "Asia/Tokyo"   # UTC+9 all year: a local-time answer is 9 hours off
ZONE_POSIX = "JST-9"  # the same zone for a C library without a zoneinfo database


@contextlib.contextmanager
def non_utc_zone():
    """Run the body with the process time zone set to UTC+9, then restore it.

    Only where the platform can change it: ``time.tzset`` does not exist on Windows, where the
    body runs in the machine's zone. Without zoneinfo files the POSIX form ``JST-9`` is used.

    Yields:
        None, once, while the zone is UTC+9.
    """
    if not hasattr(time, "tzset"):
        yield
        return
    saved = os.environ.get("TZ")
    os.environ["TZ"] = ZONE
    time.tzset()
    if time.localtime(0).tm_hour != 9:  # no zoneinfo files: use the POSIX form
        os.environ["TZ"] = ZONE_POSIX
        time.tzset()
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved
        time.tzset()


def short(value, limit: int = 80) -> str:
    """Show a value briefly for a failure message.

    Args:
        value: anything; its ``repr`` is shown.
        limit: the longest text kept (characters; default 80).

    Returns:
        ``repr(value)``, cut to ``limit`` characters ending in ``...`` when longer.
    """
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def exchange(name="read_file", inp=None, result="a\nb\nc", text="found bug in parse()"):
    """Build one exchange: an assistant text and tool_use, then the user message with its result.

    Args:
        name: the tool's name (default "read_file").
        inp: the tool's input; None uses ``{"path": "src/app.py"}``.
        result: the tool_result's content (default three lines).
        text: the assistant's reasoning text (default "found bug in parse()").

    Returns:
        ``[assistant message, user message]``, the tool_use id "toolu_1".
    """
    return [{"role": "assistant", "content": [
                {"type": "text", "text": text},
                {"type": "tool_use", "id": "toolu_1", "name": name,
                 "input": inp if inp is not None else {"path": "src/app.py"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": result}]}]


def line_for(impl, ex, *, segment="seg-001", time_seconds=T0, what=""):
    """Call ``timeline_line`` under UTC+9 and check the exchange is left alone.

    Args:
        impl: the implementation under test.
        ex: the exchange (see :func:`exchange`).
        segment: the segment id (default "seg-001").
        time_seconds: the exchange's time (Unix seconds; default :data:`T0`, 2026-01-01 00:00 UTC).
        what: the input, described briefly for a failure message.

    Returns:
        The line the learner's function returned.

    Raises:
        AssertionError: the call raised.
        InputChanged: the call changed ``ex`` (an AssertionError).
    """
    before = copy.deepcopy(ex)
    with non_utc_zone():
        try:
            got = impl.timeline_line(ex, segment=segment, time_seconds=time_seconds)
        except NotImplementedError:
            raise
        except Exception as exc:  # noqa: BLE001 - shown with the input that raised it
            raise AssertionError(f"{what}: expected a line, got {type(exc).__name__}: {exc}"
                                 ) from exc
    if ex != before:
        raise InputChanged(f"{what}: expected the exchange passed in unchanged, got "
                           f"{short(ex, 150)} after the call", "the exchange")
    return got


# --------------------------------------------------------------------------- tiers

def tier(impl, age, **kwargs):
    """Call ``impl.tier_for_age(age, **kwargs)``; an unexpected exception names the call.

    Args:
        impl: the implementation under test.
        age: the exchange's age in turns, as ``tier_for_age`` counts it (negative: refused).
        kwargs: the thresholds passed on.

    Returns:
        The tier it returned.

    Raises:
        AssertionError: the call raised (other than NotImplementedError, which propagates).
    """
    try:
        return impl.tier_for_age(age, **kwargs)
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - shown with the input that raised it
        raise AssertionError(f"tier_for_age({age}, {kwargs}): expected a tier, got "
                             f"{type(exc).__name__}: {exc}") from exc


@check(points=2, hint="Ages start at 0 for the newest exchange; an age equal to a threshold "
                      "already belongs to the next tier; use the thresholds passed in.")
def check_tier_boundaries(impl):
    got = [tier(impl, a, hot_exchanges=2, warm_a_exchanges=4, warm_b_exchanges=6) for a in range(8)]
    expected = ["hot", "hot", "warm_a", "warm_a", "warm_b", "warm_b", "cold", "cold"]
    assert got == expected, f"ages 0..7 with 2/4/6: expected {expected}, got {got}"
    for kwargs, age, expected in (({"hot_exchanges": 5}, 4, "hot"),
                                  ({"warm_a_exchanges": 12}, 10, "warm_a"),
                                  ({"warm_b_exchanges": 30}, 25, "warm_b"),
                                  ({"warm_b_exchanges": 9}, 9, "cold")):
        got = tier(impl, age, **kwargs)
        assert got == expected, f"tier_for_age({age}, {kwargs}): expected {expected!r}, got {got!r}"


@check(points=1, hint="The defaults are 3, 8 and 20 turns.")
def check_tier_defaults(impl):
    ages = (0, 2, 3, 7, 8, 19, 20, 100)
    got = [tier(impl, a) for a in ages]
    expected = ["hot", "hot", "warm_a", "warm_a", "warm_b", "warm_b", "cold", "cold"]
    assert got == expected, f"ages {ages} with the defaults: expected {expected}, got {got}"


@check(points=1, hint="A negative age is a programming error: raise ValueError.")
def check_tier_negative_age(impl):
    try:
        got = impl.tier_for_age(-1)
    except ValueError:
        return
    raise AssertionError(f"tier_for_age(-1): expected ValueError, got {got!r}")


# --------------------------------------------------------------------------- timeline lines

@check(points=3, hint="[HH:MM] tool (seg-id): input N lines; reasoning, where HH:MM is the "
                      "time in UTC whatever the machine's zone (24-hour clock, minutes cut, "
                      "not rounded).")
def check_timeline_line_seed_shape(impl):
    got = line_for(impl, exchange(result="x\n" * 119 + "x"), segment="seg-047",
                   time_seconds=T0 + 14 * 3600 + 30 * 60 + 59, what="14:30:59 UTC")
    expected = "[14:30] read_file (seg-047): src/app.py 120 lines; found bug in parse()"
    assert got == expected, f"at 14:30:59 UTC (machine zone UTC+9): expected {expected!r}, " \
                            f"got {got!r}"
    got = line_for(impl, exchange(), segment="seg-002", time_seconds=T0 + 20 * 3600 + 5.5,
                   what="20:00:05.5 UTC")
    assert got.startswith("[20:00] "), \
        f"at 20:00:05.5 UTC (05:00 the next day in UTC+9): expected '[20:00] ...', got {got!r}"


@check(points=2, hint="N is the number of newline characters + 1, nothing else counts as a "
                      "line end; for list content, count in its text parts.")
def check_timeline_line_counts_lines(impl):
    for result, n in (("a\nb\n", 3), ("", 1), ("一行目\u2028まだ一行目", 1), ("a\r\nb", 2),
                      ([{"type": "text", "text": "a\nb"},
                        {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}},
                        {"type": "text", "text": "\nc"}], 3)):
        got = line_for(impl, exchange(result=result), what=f"result {short(result, 40)}")
        expected = f"[00:00] read_file (seg-001): src/app.py {n} lines; found bug in parse()"
        assert got == expected, f"result {short(result, 60)}: expected {n} lines, got {got!r}"


@check(points=2, hint="Several tools in one message: take the FIRST tool_use, then the "
                      "tool_result whose tool_use_id matches it, wherever it is.")
def check_timeline_line_parallel_tools(impl):
    ex = [{"role": "assistant", "content": [
              {"type": "text", "text": "Reading both."},
              {"type": "tool_use", "id": "toolu_a", "name": "read_file",
               "input": {"path": "src/a.py"}},
              {"type": "tool_use", "id": "toolu_b", "name": "grep",
               "input": {"pattern": "TODO"}}]},
          {"role": "user", "content": [
              {"type": "tool_result", "tool_use_id": "toolu_b", "content": "1\n2\n3\n4"},
              {"type": "tool_result", "tool_use_id": "toolu_a", "content": "x\ny"}]}]
    got = line_for(impl, ex, segment="seg-010", time_seconds=T0 + 60, what="two tools")
    expected = "[00:01] read_file (seg-010): src/a.py 2 lines; Reading both."
    assert got == expected, ("tool_uses [read_file a, grep b], results [b: 4 lines, a: 2 lines]: "
                             f"expected {expected!r}, got {got!r}")


@check(points=1, hint="The input is path, else pattern, else command; the reasoning is the "
                      "first line of the assistant's first text block.")
def check_timeline_line_input_and_reasoning(impl):
    cases = [("grep {'pattern': 'load_config(', 'path': 'src'}",
              exchange("grep", {"pattern": "load_config(", "path": "src"}, "hit"),
              "[00:00] grep (seg-001): src 1 lines; found bug in parse()"),
             ("reasoning 'tests fail\\nmore thoughts'",
              exchange("run_bash", {"command": "pytest -q"}, "1 failed",
                       "tests fail\nmore thoughts"),
              "[00:00] run_bash (seg-001): pytest -q 1 lines; tests fail"),
             ("grep {'command': 'x', 'pattern': 'TODO'}",
              exchange("grep", {"command": "x", "pattern": "TODO"}, "hit"),
              "[00:00] grep (seg-001): TODO 1 lines; found bug in parse()")]
    two_texts = exchange()
    two_texts[0]["content"].insert(0, {"type": "text", "text": "Plan: 修正する\nstep 2"})
    cases.append(("text blocks ['Plan: 修正する\\nstep 2', 'found bug in parse()']", two_texts,
                  "[00:00] read_file (seg-001): src/app.py 3 lines; Plan: 修正する"))
    for what, ex, expected in cases:
        got = line_for(impl, ex, what=what)
        assert got == expected, f"{what}: expected {expected!r}, got {got!r}"


@check(points=1, hint="No tool_use: the tool is `reply` and only the reasoning follows; "
                      "string content counts as one text block.")
def check_timeline_line_reply(impl):
    ex = [{"role": "assistant", "content": "All tests pass.\nDone."}]
    got = line_for(impl, ex, segment="seg-009", time_seconds=T0 + 23 * 3600, what="reply")
    expected = "[23:00] reply (seg-009): All tests pass."
    assert got == expected, f"a string reply at 23:00 UTC: expected {expected!r}, got {got!r}"
    ex = [{"role": "assistant", "content": [{"type": "text", "text": "了解しました。"}]},
          {"role": "user", "content": "ありがとう"}]
    got = line_for(impl, ex, segment="seg-010", time_seconds=T0 + 9 * 3600 + 59, what="reply")
    expected = "[09:00] reply (seg-010): 了解しました。"
    assert got == expected, f"a block reply at 09:00:59 UTC: expected {expected!r}, got {got!r}"


# --------------------------------------------------------------------------- eviction order

@check(points=2, hint="Timestamps tie: order by the insertion sequence `seq`, not by time.")
def check_eviction_ties_keep_insertion_order(impl):
    segs = [{"id": "seg-b", "time": T0, "seq": 1}, {"id": "seg-a", "time": T0, "seq": 2},
            {"id": "seg-c", "time": T0, "seq": 3}]
    got = impl.eviction_order(segs)
    assert got == ["seg-b", "seg-a", "seg-c"], \
        f"three segments with the same time, seq 1, 2, 3: expected [seg-b, seg-a, seg-c], got {got}"
    assert impl.eviction_order([]) == [], "no segments: expected []"


@check(points=2, hint="A clock can step back: a later insertion with an earlier time is still "
                      "evicted later. Which field records the order of insertion? Order a copy "
                      "by it.")
def check_eviction_not_by_time(impl):
    segs = [{"id": "seg-3", "time": T0 + 5, "seq": 3}, {"id": "seg-1", "time": T0 + 10, "seq": 1},
            {"id": "seg-10", "time": T0 - 50, "seq": 10}, {"id": "seg-2", "time": T0 - 50,
                                                            "seq": 2}]
    before = copy.deepcopy(segs)
    got = impl.eviction_order(segs)
    assert got == ["seg-1", "seg-2", "seg-3", "seg-10"], \
        ("seq 3 @+5s, seq 1 @+10s, seq 10 @-50s, seq 2 @-50s: expected "
         f"['seg-1', 'seg-2', 'seg-3', 'seg-10'], got {got}")
    if segs != before:
        raise InputChanged("the same segments: expected the list passed in unchanged, got "
                           f"ids {[s['id'] for s in segs]} in that order after the call",
                           "the segments")
