"""Graded checks for exercise 02 (OrderedDrain); ``impl`` is the module under test.

The same checks run against the package (``from mini_agent import OrderedDrain``). Every check
drives the tasks with gates (``asyncio.Event``) and a few turns of the event loop, never with
timing, and looks at what the drains give WHILE tasks still run. Typical mistakes caught:
yielding in completion order; ``drain_ready`` skipping past an unsettled head, waiting for
everything, or building a list (an early stop loses results); ``drain_all`` gathering
everything before the first yield, or returning at the first unsettled task; a cursor per
drain or moved after the yield (a result twice); starting tasks lazily (they no longer run in
parallel) or with ``create_task`` (a Future is refused); an off-by-one at the tail; a failed
task swallowed, yielded as a value, or stuck at the head.

Source: exercise 02 (``solutions/02_ordered_drain.py``) and its seed, section 2 of
002_4516104fd432e704.txt (OrderedDrain: ``drainReady`` takes what is settled at the head,
``drainAll`` waits for the rest, one cursor).
"""

from __future__ import annotations

import asyncio

from mini_agent.grading import check
from mini_agent.grading.checks._report import called, expect

TURNS = 20
"""Event-loop turns that let every task that can finish, finish (no timers involved)."""


async def settle():
    """Let the event loop run every callback that is ready, a few rounds over."""
    for _ in range(TURNS):
        await asyncio.sleep(0)


async def value(v):
    """Return ``v`` at once (a task that settles on its first turn).

    Args:
        v: the result.

    Returns:
        ``v``.
    """
    return v


async def gated(gate, v, started=None):
    """Return ``v`` once ``gate`` is set (a task the check settles when it chooses).

    Args:
        gate: the ``asyncio.Event`` that lets the task finish.
        v: the result.
        started: a list the task appends ``v`` to when it starts (to see it ran eagerly).

    Returns:
        ``v``.
    """
    if started is not None:
        started.append(v)
    await gate.wait()
    return v


async def failing(gate, message):
    """Raise ``RuntimeError(message)`` once ``gate`` is set (a task that fails when the check says).

    Args:
        gate: the ``asyncio.Event`` that lets the task fail.
        message: the error's message.

    Raises:
        RuntimeError: always, with ``message``.
    """
    await gate.wait()
    raise RuntimeError(message)


ADDED: list = []
"""Coroutines handed to ``add`` during one :func:`run`; closed after it."""


def run(coro):
    """Run a coroutine with ``asyncio.run``, without asyncio's log lines for lost results.

    A failed task nobody read, or a coroutine never started, would otherwise show in asyncio's
    log or as a warning at exit; a wrong answer that loses them is reported by the check.

    Args:
        coro: the check's coroutine.

    Returns:
        What ``coro`` returned.
    """
    async def quiet():
        def handler(loop, context):
            if "never retrieved" not in context.get("message", ""):
                loop.default_exception_handler(context)
        asyncio.get_running_loop().set_exception_handler(handler)
        return await coro
    try:
        return asyncio.run(quiet())
    finally:
        for added in ADDED:
            added.close()  # no-op for a coroutine that ran to its end
        ADDED.clear()


def add(drain, task_id, awaitable):
    """Call ``drain.add(task_id, awaitable)``, closing a coroutine if add fails (no stray warnings).

    Args:
        drain: the OrderedDrain under test.
        task_id: the id passed to ``add``.
        awaitable: the coroutine (or Future) passed to ``add``.

    Raises:
        AssertionError: ``add`` raised (other than NotImplementedError, which propagates).
    """
    if asyncio.iscoroutine(awaitable):
        ADDED.append(awaitable)
    try:
        called(lambda: drain.add(task_id, awaitable), f"add({task_id!r}, ...)")
    except BaseException:
        if asyncio.iscoroutine(awaitable):
            awaitable.close()
        raise


def ready(drain, what):
    """Call ``list(drain.drain_ready())``; an exception is what came back.

    Args:
        drain: the OrderedDrain under test.
        what: the situation, described briefly for a failure message.

    Returns:
        The results ``drain_ready`` yielded.
    """
    return called(lambda: list(drain.drain_ready()), what)


async def all_of(drain, what="drain_all()"):
    """Collect ``[v async for v in drain.drain_all()]``; an exception is what came back.

    Args:
        drain: the OrderedDrain under test.
        what: the situation, described briefly for a failure message (default "drain_all()").

    Returns:
        The results ``drain_all`` yielded.

    Raises:
        AssertionError: ``drain_all`` raised (other than NotImplementedError, which propagates).
    """
    try:
        return [v async for v in drain.drain_all()]
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - the exception is what came back
        raise AssertionError(f"{what}: expected a list, got {type(exc).__name__}: {exc}") \
            from None


@check(points=1, hint="add starts the task at once (asyncio.ensure_future): tools run while the "
                      "model streams. It accepts any awaitable, a Future or a Task too.")
def check_add_starts_the_task_at_once(impl):
    async def main():
        drain = impl.OrderedDrain()
        gate, started = asyncio.Event(), []
        for name in "abc":
            add(drain, name, gated(gate, name, started))
        await settle()
        seen = list(started)
        future = asyncio.get_running_loop().create_future()
        add(drain, "future", future)
        task = asyncio.ensure_future(value("task"))
        add(drain, "task", task)
        gate.set()
        future.set_result("future")
        await settle()
        return seen, ready(drain, "drain_ready() once all 5 are done")
    seen, got = run(main())
    expect(seen, ["a", "b", "c"], "tasks started after 3 add() calls and a few loop turns")
    expect(got, ["a", "b", "c", "future", "task"],
           "drain_ready() after 3 coroutines, a Future and a Task settled")


@check(points=2, hint="drain_all yields in the order the tasks were added, never in the order "
                      "they finish.")
def check_drain_all_in_registration_order(impl):
    async def main():
        drain = impl.OrderedDrain()
        gates = {name: asyncio.Event() for name in "abc"}
        for name in "abc":
            add(drain, name, gated(gates[name], name.upper()))
        for name in "cba":  # they finish in reverse order
            gates[name].set()
            await settle()
        return await all_of(drain)
    expect(run(main()), ["A", "B", "C"], "drain_all() after a, b, c finished as c, b, a")


@check(points=2, hint="drain_all awaits only the task at the head: the first result must be "
                      "out while a later task is still running.")
def check_drain_all_yields_while_later_tasks_run(impl):
    async def main():
        drain = impl.OrderedDrain()
        gate_b = asyncio.Event()
        add(drain, "a", value("A"))
        add(drain, "b", gated(gate_b, "B"))
        add(drain, "c", value("C"))
        stream = drain.drain_all()
        first = asyncio.ensure_future(stream.__anext__())
        await settle()
        early = first.result() if first.done() else "nothing yet"
        gate_b.set()
        await settle()
        rest = ([await first] if early == "nothing yet" else []) + [v async for v in stream]
        return early, rest
    early, rest = run(main())
    expect(early, "A", "first item of drain_all() while b (added 2nd) still runs")
    expect(rest, ["B", "C"], "the rest of drain_all() once b finished")


@check(points=2, hint="drain_ready stops at the first unsettled task, even when later ones "
                      "are done, and never waits for it.")
def check_drain_ready_stops_at_unsettled_head(impl):
    async def main():
        drain = impl.OrderedDrain()
        gate = asyncio.Event()
        add(drain, "a", gated(gate, "A"))
        add(drain, "b", value("B"))
        add(drain, "c", value("C"))
        await settle()
        early = ready(drain, "drain_ready() while a (head) runs, b and c done")
        gate.set()
        await settle()
        return early, ready(drain, "drain_ready() once a finished")
    early, later = run(main())
    expect(early, [], "drain_ready() while a (the head) runs and b, c are done")
    expect(later, ["A", "B", "C"], "drain_ready() once a finished too")


@check(points=1, hint="drain_ready yields every settled result from the head, up to and "
                      "including the last task.")
def check_drain_ready_takes_the_settled_head(impl):
    async def main():
        drain = impl.OrderedDrain()
        gate = asyncio.Event()
        add(drain, "a", value("A"))
        add(drain, "b", value("B"))
        add(drain, "c", gated(gate, "C"))
        await settle()
        first = ready(drain, "drain_ready() with a, b done and c running")
        gate.set()
        await settle()
        return first, ready(drain, "drain_ready() once c finished")
    first, last = run(main())
    expect(first, ["A", "B"], "drain_ready() with a, b done and c (the last) running")
    expect(last, ["C"], "drain_ready() once c (the last) finished")


@check(points=2, hint="One shared cursor: what drain_ready took, neither drain gives again; "
                      "an exhausted drain gives nothing.")
def check_nothing_yielded_twice(impl):
    async def main():
        drain = impl.OrderedDrain()
        gate = asyncio.Event()
        for i in range(4):
            add(drain, str(i), value(i) if i < 2 else gated(gate, i))
        await settle()
        steps = [ready(drain, "1st drain_ready()"), ready(drain, "2nd drain_ready()")]
        gate.set()
        steps += [await all_of(drain, "1st drain_all()"), await all_of(drain, "2nd drain_all()"),
                  ready(drain, "3rd drain_ready()")]
        return steps
    got = run(main())
    expect(got, [[0, 1], [], [2, 3], [], []],
           "drain_ready, drain_ready, drain_all, drain_all, drain_ready over tasks 0-3")


@check(points=2, hint="The cursor is state kept between calls: a step that yields nothing "
                      "still leaves the tasks added in it queued behind the head.")
def check_state_over_a_stream(impl):
    async def main():
        drain = impl.OrderedDrain()
        gate_a, gate_d = asyncio.Event(), asyncio.Event()
        trace = []
        add(drain, "a", gated(gate_a, "a"))
        add(drain, "b", value("b"))
        await settle()
        trace.append(ready(drain, "step 1"))   # a runs: nothing
        add(drain, "c", value("c"))
        await settle()
        trace.append(ready(drain, "step 2"))   # still nothing
        gate_a.set()
        await settle()
        add(drain, "d", gated(gate_d, "d"))
        trace.append(ready(drain, "step 3"))   # a, b, c
        add(drain, "e", value("e"))
        gate_d.set()
        trace.append(await all_of(drain))     # d, e
        return trace
    expect(run(main()), [[], [], ["a", "b", "c"], ["d", "e"]],
           "a (slow) b | ready | c | ready | a ends, d | ready | e | drain_all")


@check(points=1, hint="A consumer may stop early: move the cursor before you yield, and yield "
                      "lazily (a generator, not a list built in advance).")
def check_early_stop_does_not_lose_or_repeat(impl):
    async def main():
        drain = impl.OrderedDrain()
        for i in range(5):
            add(drain, str(i), value(i))
        await settle()
        first = called(lambda: next(iter(drain.drain_ready())), "next(drain_ready())")
        second = None
        async for v in drain.drain_all():
            second = v
            break
        return first, second, await all_of(drain, "drain_all() after an early stop")
    expect(run(main()), (0, 1, [2, 3, 4]),
           "next(drain_ready()), then one item of drain_all(), then drain_all() over 0-4")


@check(points=1, hint="A task that raised re-raises its exception in its turn; the cursor has "
                      "moved past it, so the next drain goes on after it.")
def check_failed_task_raises_in_its_turn(impl):
    async def main():
        drain = impl.OrderedDrain()
        gate = asyncio.Event()
        add(drain, "a", value("a"))
        add(drain, "b", failing(gate, "b broke"))
        add(drain, "c", value("c"))
        add(drain, "d", value("d"))
        gate.set()
        await settle()
        trace = []
        try:
            for v in drain.drain_ready():
                trace.append(v)
        except RuntimeError as exc:
            trace.append(f"raised {exc}")
        trace.append(ready(drain, "drain_ready() after the failure"))
        return trace
    expect(run(main()), ["a", "raised b broke", ["c", "d"]],
           "drain_ready() over a, b (raised RuntimeError), c, d; then drain_ready() again")

    async def in_drain_all():
        drain = impl.OrderedDrain()
        gate = asyncio.Event()
        add(drain, "a", failing(gate, "a broke"))
        add(drain, "b", value("b"))
        gate.set()
        trace = []
        try:
            trace += [v async for v in drain.drain_all()]
        except RuntimeError as exc:
            trace.append(f"raised {exc}")
        trace.append(await all_of(drain, "drain_all() after the failure"))
        return trace
    expect(run(in_drain_all()), ["raised a broke", ["b"]],
           "drain_all() over a (raised RuntimeError), b; then drain_all() again")
