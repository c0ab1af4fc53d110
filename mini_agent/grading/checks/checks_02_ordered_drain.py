"""Graded checks for exercise 02 (OrderedDrain); ``impl`` is the module under test.

Typical wrong answers each check catches: yielding in completion order instead of
registration order, ``drain_ready`` skipping past an unsettled head (out of order) or waiting
for it (blocking the stream), yielding a result twice (a cursor per drain, or moved after the
yield), dropping the results drained during streaming (``drain_all`` restarting or clearing).
"""

from __future__ import annotations

import asyncio

from mini_agent.grading import check


async def after(seconds, value):
    await asyncio.sleep(seconds)
    return value


def run(coro):
    return asyncio.run(coro)


def add(drain, task_id, coro):
    """``drain.add(task_id, coro)``, closing the coroutine if add fails (no stray warnings)."""
    try:
        drain.add(task_id, coro)
    except BaseException:
        coro.close()
        raise


@check(points=2, hint="drain_all must yield in the order tasks were added, not as they finish.")
def check_drain_all_in_registration_order(impl):
    async def main():
        drain = impl.OrderedDrain()
        for name, delay in [("a", 0.03), ("b", 0.0), ("c", 0.015)]:
            add(drain, name, after(delay, name.upper()))
        return [v async for v in drain.drain_all()]
    assert run(main()) == ["A", "B", "C"]


@check(points=2, hint="drain_ready stops at the first unsettled task, even if later ones are done.")
def check_drain_ready_stops_at_unsettled_head(impl):
    async def main():
        drain = impl.OrderedDrain()
        gate = asyncio.Event()

        async def head():
            await gate.wait()
            return "A"
        add(drain, "a", head())
        add(drain, "b", after(0, "B"))
        await asyncio.sleep(0.01)
        early = list(drain.drain_ready())
        gate.set()
        await asyncio.sleep(0.01)
        return early, list(drain.drain_ready())
    assert run(main()) == ([], ["A", "B"])


@check(points=1, hint="drain_ready must never wait: it returns at once when the head is busy.")
def check_drain_ready_does_not_block(impl):
    async def main():
        drain = impl.OrderedDrain()
        add(drain, "slow", after(0.5, "x"))
        loop = asyncio.get_running_loop()
        start = loop.time()
        got = list(drain.drain_ready())
        return got, loop.time() - start
    got, elapsed = run(main())
    assert got == [] and elapsed < 0.1


@check(points=2, hint="One shared cursor: what drain_ready took, drain_all must not yield again.")
def check_nothing_yielded_twice(impl):
    async def main():
        drain = impl.OrderedDrain()
        for i in range(4):
            add(drain, str(i), after(0 if i < 2 else 0.02, i))
        await asyncio.sleep(0.005)
        ready = list(drain.drain_ready())
        again = list(drain.drain_ready())
        rest = [v async for v in drain.drain_all()]
        final = [v async for v in drain.drain_all()]
        return ready, again, rest, final
    ready, again, rest, final = run(main())
    assert ready == [0, 1] and again == [] and final == []
    assert rest == [2, 3]


@check(points=2, hint="Results drained during streaming plus those after must cover every task.")
def check_no_result_dropped_across_both_drains(impl):
    async def main():
        drain = impl.OrderedDrain()
        collected = []
        delays = [0.0, 0.02, 0.0, 0.03, 0.0, 0.01]
        for i, d in enumerate(delays):  # "streaming": tasks arrive while we drain
            add(drain, f"t{i}", after(d, i))
            await asyncio.sleep(0.004)
            collected += list(drain.drain_ready())
        collected += [v async for v in drain.drain_all()]
        return collected
    assert run(main()) == [0, 1, 2, 3, 4, 5]


@check(points=1, hint="A consumer may stop early: move the cursor before you yield.")
def check_early_stop_does_not_repeat(impl):
    async def main():
        drain = impl.OrderedDrain()
        for i in range(3):
            add(drain, str(i), after(0, i))
        await asyncio.sleep(0.01)
        first = next(iter(drain.drain_ready()))
        return first, [v async for v in drain.drain_all()]
    assert run(main()) == (0, [1, 2])
