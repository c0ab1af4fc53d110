"""Tests for the demo task and DemoBrain: it really fixes the project, deterministically.

The driver below is deliberately tiny (respond, run the tool_uses with run_tool, append the
results, repeat); the kit's Agent drives the same brain through the SDK.
"""

import subprocess
import sys

import pytest

from mini_agent.core.continuation import CONTINUE_PROMPT
from mini_agent.demo import DEMO_TASK, PROJECT_DIR, TEST_COMMAND, copy_demo_workspace
from mini_agent.core.masking import mask_old_observations
from mini_agent.core.messages import validate_messages
from mini_agent.offline.demo_brain import DemoBrain
from mini_agent.offline.demo_bugs import parse_test_report
from mini_agent.core.tokens import approx_tokens
from mini_agent.harness.executor import run_tool
from mini_agent.harness.tools import build_tools

TASK_TOOL_CALLS = 18
TASK_APPROX_TOKENS = 9_077
TASK_MASKED_APPROX_TOKENS = 2_026  # mask_old_observations(keep=4) of the final history
TOOL_SEQUENCE = [
    "list_dir", "read_file", "read_file", "glob", "run_bash", "read_file", "read_file", "grep",
    "read_file", "read_file", "edit_file", "run_bash", "grep", "read_file", "edit_file",
    "run_bash", "grep", "list_dir"]


def execute(tools, reply):
    """Run the reply's tool_uses in order; return the user message with their tool_results."""
    results = []
    for block in reply["content"]:
        if block["type"] == "tool_use":
            content, is_error = run_tool(tools, block["name"], block["input"])
            result = {"type": "tool_result", "tool_use_id": block["id"], "content": content}
            if is_error:
                result["is_error"] = True
            results.append(result)
    return {"role": "user", "content": results}


def drive(workspace, prompts, *, view=lambda h: h, before_tools=None, max_turns=60):
    """Run the brain on each prompt until end_turn; return the full history."""
    tools = build_tools(workspace)
    definitions = [t.definition() for t in tools.values()]
    brain = DemoBrain()
    history = []
    for prompt in prompts:
        history.append({"role": "user", "content": prompt})
        for _ in range(max_turns):
            validate_messages(history)
            reply = brain.respond({"messages": view(history), "tools": definitions})
            history.append({"role": "assistant", "content": reply["content"]})
            validate_messages(history[:-1] + [{"role": "assistant", "content": [
                b for b in reply["content"] if b["type"] == "text"]}])
            if reply["stop_reason"] != "tool_use":
                assert reply["stop_reason"] == "end_turn"
                break
            if before_tools:
                before_tools(reply)
            history.append(execute(tools, reply))
        else:
            pytest.fail("the brain did not finish")
    validate_messages(history)
    return history


def tool_uses(history):
    return [b for m in history if m["role"] == "assistant" for b in m["content"]
            if b["type"] == "tool_use"]


def run_demo_tests(workspace):
    return subprocess.run([sys.executable, "run_tests.py"], cwd=workspace, capture_output=True,
                          text=True)


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    workspace = copy_demo_workspace(tmp_path_factory.mktemp("demo") / "ws")
    return workspace, drive(workspace, [DEMO_TASK])


def test_the_bundled_project_fails_before_the_run(tmp_path):
    workspace = copy_demo_workspace(tmp_path / "ws")
    proc = run_demo_tests(workspace)
    assert proc.returncode == 1
    assert "Ran 34 tests: 32 passed, 2 failed, 0 errors" in proc.stdout
    assert str(workspace) not in proc.stdout and " in 0." not in proc.stdout
    assert not (PROJECT_DIR / "invoicing" / "discounts.py.bak").exists()


def test_copy_demo_workspace_refuses_a_non_empty_dest(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "f").write_text("keep me")
    with pytest.raises(FileExistsError):
        copy_demo_workspace(tmp_path / "x")
    assert (tmp_path / "x" / "f").read_text() == "keep me"
    fresh = copy_demo_workspace()
    assert sorted(p.name for p in fresh.iterdir()) == ["README.md", "invoicing", "run_tests.py",
                                                        "tests"]


def test_brain_fixes_the_project(solved):
    workspace, history = solved
    proc = run_demo_tests(workspace)
    assert proc.returncode == 0, proc.stdout
    assert "Ran 34 tests: 34 passed, 0 failed, 0 errors" in proc.stdout
    assert "if quantity >= tier.min_quantity:" in (workspace / "invoicing/discounts.py").read_text()
    assert ("return amount.quantize(CENT, rounding=ROUND_HALF_UP)"
            in (workspace / "invoicing/money.py").read_text())
    # The tests were not touched.
    for test in (PROJECT_DIR / "tests").glob("*.py"):
        assert (workspace / "tests" / test.name).read_text() == test.read_text()


def test_run_figures(solved):
    _, history = solved
    assert [b["name"] for b in tool_uses(history)] == TOOL_SEQUENCE
    assert len(tool_uses(history)) == TASK_TOOL_CALLS
    assert approx_tokens(history) == TASK_APPROX_TOKENS
    assert approx_tokens(mask_old_observations(history, keep=4)) == TASK_MASKED_APPROX_TOKENS
    # Parallel read-only calls in one assistant message exercise the executor.
    sizes = [sum(b["type"] == "tool_use" for b in m["content"]) for m in history
             if m["role"] == "assistant"]
    assert sizes == [1, 3, 1, 3, 2, 1, 1, 1, 1, 1, 1, 2, 0]


def test_final_summary_explains_both_bugs(solved):
    _, history = solved
    summary = history[-1]["content"][0]["text"]
    assert summary.startswith("All 34 tests pass.\n\nThere were 2 bugs")
    assert "`if quantity > tier.min_quantity:` is now `if quantity >= tier.min_quantity:`" in summary
    assert "ROUND_HALF_EVEN" in summary and "No test was changed." in summary
    # Its reasoning names what the tools returned, e.g. the line grep/read found.
    texts = [b["text"] for m in history if m["role"] == "assistant" for b in m["content"]
             if b["type"] == "text"]
    assert any("`bulk_discount_rate` line 54 reads" in t for t in texts)
    assert any("51.19 instead of 51.20" in t for t in texts)


def test_two_runs_give_identical_histories(solved, tmp_path):
    _, first = solved
    second = drive(copy_demo_workspace(tmp_path / "ws"), [DEMO_TASK])
    assert second == first


def test_masked_view_leads_to_the_same_run(solved, tmp_path):
    _, first = solved
    masked = drive(copy_demo_workspace(tmp_path / "ws"), [DEMO_TASK],
                   view=lambda h: mask_old_observations(h, keep=4))
    assert masked == first


def test_failed_edit_is_reread_and_retried(tmp_path):
    workspace = copy_demo_workspace(tmp_path / "ws")
    target = workspace / "invoicing" / "discounts.py"

    def tamper(reply):  # someone reformats the line between the brain's read and its edit
        if any(b["type"] == "tool_use" and b["name"] == "edit_file"
               and b["input"]["path"] == "invoicing/discounts.py" for b in reply["content"]):
            text = target.read_text()
            target.write_text(text.replace("if quantity > tier", "if  quantity > tier"))

    history = drive(workspace, [DEMO_TASK], before_tools=tamper)
    names = [b["name"] for b in tool_uses(history)]
    assert names[10:14] == ["edit_file", "read_file", "edit_file", "run_bash"]
    results = [b for m in history if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"]]
    assert results[10]["is_error"] is True
    assert results[10]["content"].startswith("old_string not found in invoicing/discounts.py")
    retry = tool_uses(history)[12]["input"]
    assert retry["old_string"] == "        if  quantity > tier.min_quantity:"
    assert retry["new_string"] == "        if  quantity >= tier.min_quantity:"
    assert run_demo_tests(workspace).returncode == 0


def test_follow_up_questions(solved, tmp_path):
    workspace = copy_demo_workspace(tmp_path / "ws")
    history = drive(workspace, [DEMO_TASK, "What does money.py define?",
                                "Which lines did you change?", "What is in README.md?"],
                    view=lambda h: mask_old_observations(h, keep=4))
    answers = [m["content"][0]["text"] for m in history if m["role"] == "assistant"]
    money = next(a for a in answers if a.startswith("`invoicing/money.py` has 85 lines"))
    assert "`round_money` (line 44)" in money
    assert "I edited it: `return amount.quantize(CENT)` became" in money
    assert answers[-3].startswith("I changed these lines")
    # README's read was masked in the view, so the brain read it again before answering.
    assert answers[-2] == ("My earlier read of `README.md` is no longer in my context (its "
                           "observation was masked), so I'll read it again.")
    assert answers[-1] == ("`README.md` has 38 lines. It opens with: # invoicing\nIt has "
                           "sections Layout (line 5), Pricing rules (line 14), Running the "
                           "tests (line 31).")


def test_continuation_sends_only_the_rest():
    brain = DemoBrain()
    request = {"messages": [{"role": "user", "content": DEMO_TASK}],
               "tools": [{"name": "list_dir", "description": "", "input_schema": {}}]}
    full = brain.respond(request)
    text = full["content"][0]["text"]
    cut = text[:20]
    request["messages"] += [{"role": "assistant", "content": [{"type": "text", "text": cut}]},
                            {"role": "user", "content": CONTINUE_PROMPT}]
    rest = brain.respond(request)
    assert rest["stop_reason"] == "tool_use"
    assert rest["content"][0] == {"type": "text", "text": text[20:]}
    assert rest["content"][1]["input"] == {"path": "."}


def test_without_tools_it_says_so():
    reply = DemoBrain().respond({"messages": [{"role": "user", "content": DEMO_TASK}]})
    assert reply == {"content": [{"type": "text", "text": (
        "I need the list_dir tool(s) for the next step, but this request offers none by that "
        "name, so I cannot continue.")}], "stop_reason": "end_turn"}


def test_parse_test_report():
    report = parse_test_report(
        "test_a: 2 tests, 1 failed\n\nFAIL: test_a.T.test_x\n  tests/test_a.py:3 in test_x\n"
        "    self.assertEqual(f(1), 2)\n  AssertionError: 1 != 2\n\n"
        "Ran 2 tests: 1 passed, 1 failed, 0 errors\nFAILED\n[exit code: 1]")
    assert report.failures == (("test_a.T.test_x", "tests/test_a.py:3",
                                "self.assertEqual(f(1), 2)", "AssertionError: 1 != 2"),)
    assert (report.ran, report.passed, report.exit_code, report.ok) == (2, 1, 1, False)
    assert parse_test_report("[observation masked — 12 lines omitted]") is None
    assert TEST_COMMAND == "python3 run_tests.py"


def _as_param(block):
    if block.type == "text":
        return {"type": "text", "text": block.text}
    return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}


def test_through_the_sdk_client(solved, tmp_path):
    offline = pytest.importorskip("mini_agent.offline")
    _, expected = solved
    client = offline.offline_client(DemoBrain())
    workspace = copy_demo_workspace(tmp_path / "ws")
    tools = build_tools(workspace)
    history = [{"role": "user", "content": DEMO_TASK}]
    for _ in range(40):
        message = client.messages.create(model="claude-sonnet-4-6", max_tokens=2048,
                                         messages=history,
                                         tools=[t.definition() for t in tools.values()])
        reply = {"content": [_as_param(b) for b in message.content],
                 "stop_reason": message.stop_reason}
        history.append({"role": "assistant", "content": reply["content"]})
        if message.stop_reason != "tool_use":
            break
        history.append(execute(tools, reply))
    assert history == expected
    assert run_demo_tests(workspace).returncode == 0


@pytest.mark.parametrize("kind", ["text", "tool_use"])
def test_auto_continue_through_an_injected_max_tokens(kind):
    offline = pytest.importorskip("mini_agent.offline")
    from mini_agent.core.continuation import auto_continue
    client = offline.offline_client(DemoBrain(),
                                    faults=offline.FaultPlan(max_tokens_at={1: kind}))
    tools = [{"name": "list_dir", "description": "List a directory",
              "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
    merged = auto_continue(client, model="claude-sonnet-4-6", max_tokens=1024,
                           messages=[{"role": "user", "content": DEMO_TASK}], tools=tools)
    assert merged["attempts"] == 2 and merged["stop_reason"] == "tool_use"
    assert merged["content"][0] == {"type": "text",
                                    "text": "I'll start by looking at how the project is laid out."}
    assert merged["content"][1]["name"] == "list_dir"
    assert merged["content"][1]["input"] == {"path": "."}
    assert len(merged["dropped_tool_use_ids"]) == (1 if kind == "tool_use" else 0)


@pytest.mark.parametrize("opening", ["hello", "What is in README.md?"])
def test_the_task_works_when_it_is_not_the_first_prompt(tmp_path, opening):
    workspace = copy_demo_workspace(tmp_path / "ws")
    history = drive(workspace, [opening, DEMO_TASK])
    task_at = next(i for i, m in enumerate(history) if m["content"] == DEMO_TASK)
    assert [b["name"] for b in tool_uses(history[task_at:])] == TOOL_SEQUENCE
    assert run_demo_tests(workspace).returncode == 0


def test_a_question_about_the_bug_stays_a_follow_up(solved, tmp_path):
    workspace = copy_demo_workspace(tmp_path / "ws")
    history = drive(workspace, [DEMO_TASK, "Which file had the bug?"])
    last_task_call = max(i for i, m in enumerate(history) if m["role"] == "assistant"
                         and any(b["type"] == "tool_use" for b in m["content"]))
    question_at = next(i for i, m in enumerate(history) if m["content"] == "Which file had the bug?")
    assert last_task_call < question_at      # answered from what it already knows
