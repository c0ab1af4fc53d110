"""The transcript prints one line per Stop-hook block, and says when the cap ends the loop."""

import io

from mini_agent import Agent, offline_async_client
from mini_agent.console import event_printer, repl, stop_blocked_line
from mini_agent.harness.hooks import HookManager
from mini_agent.harness.loop_events import LoopEnd, StopBlocked
from mini_agent.offline import ScriptedBrain


def prompts(*lines):
    queue = list(lines)

    def read(_prompt):
        if not queue:
            raise EOFError
        return queue.pop(0)
    return read


def test_each_kind_of_block_prints_its_own_line():
    out = io.StringIO()
    show = event_printer(out)
    show(StopBlocked("run the tests\nfirst", 2, True))
    show(StopBlocked("not yet", 4, False, 3))
    show(LoopEnd("stop_hook_limit", 4))
    show(StopBlocked("one more", 1, False, 3))
    show(StopBlocked("", 1, True, 1))
    assert out.getvalue().splitlines() == [
        "[Stop hook blocked 2/8] run the tests first; the model goes on with the reason",
        "[Stop hook blocked 4/3] not yet; the cap of 3 blocks is reached, the loop ends",
        "[stop_hook_limit after 4 model requests]",
        "[Stop hook blocked 1/3] one more; the loop ends anyway",
        "[Stop hook blocked 1/1] (no reason given); the model goes on with the reason"]


def test_a_long_reason_stays_on_one_short_line():
    line = stop_blocked_line(StopBlocked("why " * 200, 1, True))
    assert "\n" not in line and len(line) < 170 and "why why" in line


def test_the_repl_shows_every_block_and_the_cap_that_ends_the_run():
    hooks = HookManager()
    hooks.on("Stop", lambda p: {"decision": "block", "reason": "tests still fail"})
    agent = Agent(offline_async_client(ScriptedBrain([], final_text="Done.")), tools={},
                  hooks=hooks, max_stop_hook_blocks=2)
    out = io.StringIO()
    assert repl(agent, out=out, read=prompts("fix it")) == 0
    blocked = [line for line in out.getvalue().splitlines() if "Stop hook blocked" in line]
    assert blocked == [
        "[Stop hook blocked 1/2] tests still fail; the model goes on with the reason",
        "[Stop hook blocked 2/2] tests still fail; the model goes on with the reason",
        "[Stop hook blocked 3/2] tests still fail; the cap of 2 blocks is reached, the loop ends"]
    assert "[stop_hook_limit after 3 model requests]" in out.getvalue()


def test_a_block_with_no_request_left_says_the_loop_ends_anyway():
    hooks = HookManager()
    hooks.on("Stop", lambda p: {"decision": "block", "reason": "not yet"})
    agent = Agent(offline_async_client(ScriptedBrain(["Fixed it."])), tools={}, hooks=hooks,
                  max_turns=1)
    out = io.StringIO()
    agent.run("fix it", on_event=event_printer(out))
    lines = out.getvalue().splitlines()
    assert lines[-2:] == ["[Stop hook blocked 1/8] not yet; the loop ends anyway",
                          "[max_turns_reached after 1 model request]"]
