"""The demo task completes under every view policy, because DemoBrain reads the state it is shown.

The Agent drives DemoBrain through the offline SDK client with the view policy under test:
the full history, observation masking, ``context_collapse(keep_recent_tokens=1500)`` (the
early edits drop out of view) and ``micro_compact`` with a clock that ages results by 30
minutes a request (old reads come back as ``[Old tool result content cleared]``). Each run must
fix both planted bugs, leave the tests untouched and finish in a bounded number of requests,
also when the task is not the first prompt. A view that hides every result as soon as it
arrives makes the brain stop, never loop; a question about the changes asked after a collapse
is answered from the code.
"""

import subprocess
import sys

import pytest

from mini_agent.core.clock import ManualClock
from mini_agent.core.compaction import COLLAPSE_NOTICE, context_collapse, micro_compact
from mini_agent.core.masking import ThresholdMasking, mask_old_observations
from mini_agent.core.view import full_view
from mini_agent.demo import DEMO_TASK, PROJECT_DIR, copy_demo_workspace
from mini_agent.harness.agent import Agent
from mini_agent.harness.tools import build_tools
from mini_agent.offline import offline_async_client
from mini_agent.offline.demo_brain import DemoBrain

MAX_REQUESTS = 16   # a full-view run takes 13; a collapsed one re-derives a step or two


def _collapse(history, ctx):
    return context_collapse(history, keep_recent_tokens=1500)


def _micro(history, ctx):
    return micro_compact(history, times=ctx.times_for(history), now=ctx.now)


VIEWS = {
    "full": full_view,
    "masking": ThresholdMasking(),
    "collapse_1500": _collapse,
    "micro_compact": _micro,
}


def run_agent(tmp_path, view, prompts):
    """Run each prompt through an Agent over DemoBrain; return (views sent, workspace, results)."""
    workspace = copy_demo_workspace(tmp_path / "ws")
    clock = ManualClock()
    views = []

    def recording(history, ctx):
        views.append(view(history, ctx))
        return views[-1]
    agent = Agent(offline_async_client(DemoBrain()), tools=build_tools(workspace),
                  view_policy=recording, clock=clock, max_turns=MAX_REQUESTS,
                  on_request=lambda record: clock.advance(30 * 60))
    results = [agent.run(prompt) for prompt in prompts]
    return views, workspace, results


def assert_fixed(workspace):
    proc = subprocess.run([sys.executable, "run_tests.py"], cwd=workspace, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout
    assert "Ran 34 tests: 34 passed, 0 failed, 0 errors" in proc.stdout
    assert "if quantity >= tier.min_quantity:" in (workspace / "invoicing/discounts.py").read_text()
    assert ("return amount.quantize(CENT, rounding=ROUND_HALF_UP)"
            in (workspace / "invoicing/money.py").read_text())
    for test in (PROJECT_DIR / "tests").glob("*.py"):
        assert (workspace / "tests" / test.name).read_text() == test.read_text()


def sent(views):
    """Every message of every view the agent sent, as one list."""
    return [m for view in views for m in view]


@pytest.mark.parametrize("opening", [None, "hello"])
@pytest.mark.parametrize("name", list(VIEWS))
def test_the_task_completes_under_every_view(tmp_path, name, opening):
    prompts = [DEMO_TASK] if opening is None else [opening, DEMO_TASK]
    _, workspace, results = run_agent(tmp_path, VIEWS[name], prompts)
    task = results[-1]
    assert task.exit_status == "completed" and task.turns <= MAX_REQUESTS
    assert_fixed(workspace)
    assert task.text.startswith("All 34 tests pass.")
    assert "round_money" in task.text and "bulk_discount_rate" in task.text
    assert "No test was changed." in task.text


def test_collapse_really_drops_the_first_edit(tmp_path):
    views, workspace, results = run_agent(tmp_path, _collapse, [DEMO_TASK])
    assert any(COLLAPSE_NOTICE in str(v[0]["content"]) for v in views)
    last = views[-1]
    edits = [b for m in last if m["role"] == "assistant" and isinstance(m["content"], list)
             for b in m["content"] if b.get("type") == "tool_use" and b["name"] == "edit_file"]
    # The summary was written without seeing the first edit: it reads the fixes off the code.
    assert [e["input"]["path"] for e in edits] == ["invoicing/money.py"]
    assert "Some of my edits are no longer in my context, so I read the fixes off the code:" in (
        results[0].text)
    assert "line 54 now reads `if quantity >= tier.min_quantity:`" in results[0].text
    assert "line 46 now reads `return amount.quantize(CENT, rounding=ROUND_HALF_UP)`" in (
        results[0].text)


def test_micro_compact_really_clears_reads(tmp_path):
    views, _, _ = run_agent(tmp_path, _micro, [DEMO_TASK])
    cleared = [b for m in sent(views) if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"
               and b.get("content") == "[Old tool result content cleared]"]
    assert len(cleared) >= 5


def test_collapsed_task_prompt_after_a_greeting_is_still_the_task(tmp_path):
    views, workspace, results = run_agent(tmp_path, _collapse, ["hello", DEMO_TASK])
    last = views[-1]
    assert last[0]["content"][0]["text"] == "hello"   # the task prompt itself is out of view
    assert all(DEMO_TASK not in str(m["content"]) for m in last)
    assert_fixed(workspace)


def test_a_question_about_the_changes_after_a_collapse_is_answered_from_the_code(tmp_path):
    _, _, results = run_agent(tmp_path, _collapse, [DEMO_TASK, "Which lines did you change?"])
    answer = results[-1]
    assert answer.turns == 2     # one grep for the fixed lines, then the answer
    assert answer.text.splitlines() == [
        "The early conversation is out of my context, so I read my changes off the code: "
        "these lines are fixed (each changed file kept a `.bak` backup):",
        "- `invoicing/discounts.py` line 54 (`bulk_discount_rate`): `if quantity >= "
        "tier.min_quantity:`: the bulk discount started one unit too late",
        "- `invoicing/money.py` line 46 (`round_money`): `return amount.quantize(CENT, "
        "rounding=ROUND_HALF_UP)`: half cents were rounded to even"]


def _hide_all(history, ctx):
    return micro_compact(history, times=ctx.times_for(history), now=ctx.now + 7200)


def _keep_2(history, ctx):
    return mask_old_observations(history, keep=2)


@pytest.mark.parametrize("view, requests", [(_hide_all, 3), (_keep_2, 4)])
def test_a_view_that_hides_what_it_needs_stops_the_brain(tmp_path, view, requests):
    # _hide_all clears every read as soon as it arrives; keep=2 never shows the three results
    # of the overview step at once. Either way the brain fetches once again, then stops.
    _, workspace, results = run_agent(tmp_path, view, [DEMO_TASK])
    assert results[0].exit_status == "completed" and results[0].turns == requests
    assert results[0].text.startswith("The results of my tool calls are hidden from my context")
