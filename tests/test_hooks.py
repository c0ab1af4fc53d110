"""Tests for mini_agent.harness.hooks: serial fire, merging, the command-hook contract, settings.json."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mini_agent.harness.command_hooks import EXAMPLES_DIR, CommandHook
from mini_agent.harness.hook_settings import HookSettingsError
from mini_agent.harness.hooks import HookManager, HookResult, matches, parse_hook_output

PY = sys.executable


def fire(manager: HookManager, event: str, payload: dict) -> HookResult:
    return asyncio.run(manager.fire(event, payload))


def test_a_result_reads_as_the_seeds_flat_output():
    """Exercise 06: fire's result compares with the merged flat dict; errors stay apart."""
    m = HookManager()
    m.on("PreToolUse", lambda p: {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                         "updatedInput": {"command": "ls"}}})
    m.on("PreToolUse", lambda p: {"systemMessage": "checked", "bogus": 1})
    result = fire(m, "PreToolUse", {"tool_name": "run_bash", "tool_input": {"command": "l"}})
    assert result == {"updatedInput": {"command": "ls"}, "systemMessage": "checked"}
    assert result["systemMessage"] == "checked" and result.get("decision") is None
    assert len(result.errors) == 1 and result != HookResult(
        updated_input={"command": "ls"}, system_message="checked")
    stop = parse_hook_output({"continue": False, "stopReason": "done"})
    assert dict(stop) == {"continue": False, "stopReason": "done", "decision": "block",
                          "reason": "done"}
    assert fire(HookManager(), "Stop", {}) == {} and len(HookResult()) == 0


def test_block_rm_rf_blocks_only_the_root_in_shell_tools():
    from mini_agent import block_rm_rf
    for tool, command in (("run_bash", "rm -rf /"), ("Bash", "sudo rm  -fr\t/ --no-preserve-root"),
                          ("run_bash", "rm -rf /*")):
        out = block_rm_rf({"tool_name": tool, "tool_input": {"command": command}})
        assert out["decision"] == "block" and command in out["reason"]
    for tool, command in (("run_bash", "rm -rf /tmp/x"), ("read_file", "rm -rf /"),
                          ("run_bash", "rm -rf ~")):
        assert block_rm_rf({"tool_name": tool, "tool_input": {"command": command}}) == {}
    m = HookManager()
    m.on("PreToolUse", block_rm_rf)
    assert fire(m, "PreToolUse", {"tool_name": "run_bash",
                                  "tool_input": {"command": "rm -rf /"}}).blocked


def script(tmp_path: Path, name: str, body: str) -> str:
    """Write an executable Python hook script and return a shell command that runs it."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return f'"{PY}" "{path}"'


# --------------------------------------------------------------------------- fire: order, merge

def test_handlers_run_serially_in_registration_order():
    events: list[str] = []
    m = HookManager()

    async def slow(payload):
        events.append("slow start")
        await asyncio.sleep(0.02)
        events.append("slow end")
        return {}

    async def fast(payload):
        events.append("fast")
        return {}
    m.on("Stop", slow)
    m.on("Stop", fast)
    fire(m, "Stop", {})
    assert events == ["slow start", "slow end", "fast"]


def test_first_block_returns_at_once_and_later_handlers_do_not_run():
    calls: list[str] = []
    m = HookManager()
    m.on("PreToolUse", lambda p: calls.append("a") or {"systemMessage": "from a"})
    m.on("PreToolUse", lambda p: calls.append("b") or {"decision": "block", "reason": "no rm"})
    m.on("PreToolUse", lambda p: calls.append("c") or {"systemMessage": "from c"})
    result = fire(m, "PreToolUse", {"tool_name": "run_bash", "tool_input": {}})
    assert calls == ["a", "b"]
    assert (result.blocked, result.reason, result.system_message) == (True, "no rm", None)


def test_outputs_merge_later_wins_and_none_keeps_earlier():
    m = HookManager()
    m.on("UserPromptSubmit", lambda p: {"systemMessage": "first", "hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit", "additionalContext": "ctx 1"}})
    m.on("UserPromptSubmit", lambda p: {"systemMessage": "second"})
    m.on("UserPromptSubmit", lambda p: None)
    result = fire(m, "UserPromptSubmit", {"prompt": "hi"})
    assert (result.blocked, result.system_message, result.additional_context) == (
        False, "second", "ctx 1")


def test_updated_input_is_seen_by_the_next_handler_and_returned():
    seen = []
    m = HookManager()
    m.on("PreToolUse", lambda p: {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "updatedInput": {"command": "ls -la"}}})
    m.on("PreToolUse", lambda p: seen.append(p["tool_input"]))
    payload = {"tool_name": "run_bash", "tool_input": {"command": "ls"}}
    result = fire(m, "PreToolUse", payload)
    assert seen == [{"command": "ls -la"}]
    assert result.updated_input == {"command": "ls -la"}
    assert payload["tool_input"] == {"command": "ls"}  # caller's payload untouched


def test_updated_tool_output_accepts_the_mcp_alias_and_chains():
    seen = []
    m = HookManager()
    m.on("PostToolUse", lambda p: {"hookSpecificOutput": {"updatedMCPToolOutput": "clean"}})
    m.on("PostToolUse", lambda p: seen.append(p["tool_response"]))
    result = fire(m, "PostToolUse", {"tool_name": "grep", "tool_response": "secret"})
    assert (seen, result.updated_output) == (["clean"], "clean")


def test_permission_deny_and_continue_false_block():
    deny = parse_hook_output({"hookSpecificOutput": {
        "permissionDecision": "deny", "permissionDecisionReason": "outside workspace"}})
    assert (deny.blocked, deny.reason, deny.permission_decision) == (True, "outside workspace",
                                                                     "deny")
    stop = parse_hook_output({"continue": False, "stopReason": "budget spent"})
    assert (stop.blocked, stop.stop, stop.stop_reason) == (True, True, "budget spent")
    allow = parse_hook_output({"hookSpecificOutput": {"permissionDecision": "allow"}})
    assert (allow.blocked, allow.permission_decision) == (False, "allow")
    assert parse_hook_output({"decision": "block"}, event="Stop").reason == \
        "blocked by a Stop hook"


def test_payload_gets_hook_event_name_and_raising_handler_is_a_reported_error():
    seen = []
    m = HookManager()

    def broken(payload):
        raise RuntimeError("oops")
    m.on("SessionStart", broken)
    m.on("SessionStart", lambda p: seen.append(p["hook_event_name"]) or {"systemMessage": "ok"})
    result = fire(m, "SessionStart", {"session_id": "s"})
    assert seen == ["SessionStart"]
    assert not result.blocked and result.system_message == "ok"
    assert result.errors == ["SessionStart hook broken raised RuntimeError: oops"]


def test_unknown_event_and_bad_matcher_are_refused():
    m = HookManager()
    with pytest.raises(ValueError, match="unknown hook event 'PreTool'"):
        m.on("PreTool", lambda p: None)
    with pytest.raises(ValueError):
        m.on("PreToolUse", lambda p: None, matcher="(")
    with pytest.raises(ValueError):
        fire(m, "Nope", {})
    with pytest.raises(TypeError):
        parse_hook_output(["block"])


@pytest.mark.parametrize("matcher,tool,expected", [
    (None, "run_bash", True), ("", "grep", True), ("*", "grep", True),
    ("Bash", "run_bash", True), ("run_bash", "run_bash", True), ("Bash", "Bash", True),
    ("Edit|Write", "edit_file", True), ("Edit|Write", "Write", True),
    ("Edit|Write", "read_file", False), ("read", "read_file", False),
    ("read_.*", "read_file", True), ("mcp__.*", "mcp__github__search", True),
    ("Grep", "glob", False),
])
def test_matcher_is_a_full_regex_on_the_tool_name_or_its_claude_code_alias(matcher, tool,
                                                                           expected):
    assert matches(matcher, "PreToolUse", {"tool_name": tool}) is expected


def test_matcher_skips_non_matching_handlers_and_is_ignored_for_stop():
    calls = []
    m = HookManager()
    m.on("PreToolUse", lambda p: calls.append("bash"), matcher="Bash")
    m.on("PreToolUse", lambda p: calls.append("read"), matcher="Read")
    m.on("Stop", lambda p: calls.append("stop"), matcher="Bash")
    fire(m, "PreToolUse", {"tool_name": "read_file", "tool_input": {}})
    fire(m, "Stop", {})
    assert calls == ["read", "stop"]
    assert matches("startup", "SessionStart", {"source": "startup"})
    assert not matches("resume", "SessionStart", {"source": "startup"})


def test_fire_sync_works_outside_and_inside_a_running_loop():
    m = HookManager()
    m.on("Stop", lambda p: {"systemMessage": "done"})
    assert m.fire_sync("Stop", {}).system_message == "done"

    async def inside():
        return m.fire_sync("Stop", {})
    assert asyncio.run(inside()).system_message == "done"


# --------------------------------------------------------------------------- command hooks

def run_command(command: str, payload: dict, *, timeout: float = 10.0,
                cwd: Path | None = None) -> HookResult:
    hook = CommandHook(command, timeout_seconds=timeout, cwd=cwd)
    return asyncio.run(hook(payload))


def test_exit_0_json_stdout_is_applied_and_stdin_holds_the_payload(tmp_path):
    cmd = script(tmp_path, "h.py", """
        import json, sys
        p = json.load(sys.stdin)
        print(json.dumps({"systemMessage": p["hook_event_name"] + ":" + p["tool_input"]["command"],
                          "hookSpecificOutput": {"updatedInput": {"command": "echo safe"}}}))
    """)
    result = run_command(cmd, {"hook_event_name": "PreToolUse", "tool_name": "run_bash",
                               "tool_input": {"command": "ls"}})
    assert result == HookResult(system_message="PreToolUse:ls",
                                updated_input={"command": "echo safe"})


def test_exit_0_non_json_stdout_is_ignored_with_a_warning(tmp_path):
    result = run_command("echo 'all good'", {"hook_event_name": "PreToolUse"})
    assert not result.blocked and result.updated_input is None
    assert len(result.errors) == 1 and "non-JSON stdout; ignored" in result.errors[0]
    # Claude Code: plain stdout of a UserPromptSubmit hook is context for the model.
    ctx = run_command("echo 'branch: main'", {"hook_event_name": "UserPromptSubmit"})
    assert (ctx.additional_context, ctx.errors) == ("branch: main", [])


def test_exit_0_empty_stdout_is_no_opinion():
    assert run_command("true", {"hook_event_name": "Stop"}) == HookResult()


def test_exit_2_blocks_with_stderr_as_reason():
    result = run_command("echo 'rm -rf / is blocked' >&2; exit 2",
                         {"hook_event_name": "PreToolUse"})
    assert (result.blocked, result.reason) == (True, "rm -rf / is blocked")


def test_exit_2_with_empty_stderr_still_blocks_with_a_reason():
    result = run_command("exit 2", {"hook_event_name": "PreToolUse"})
    assert result.blocked
    assert result.reason == "blocked by PreToolUse hook `exit 2` (exit code 2, no message)"


@pytest.mark.parametrize("code", [1, 3, 127])
def test_other_exit_codes_are_non_blocking_reported_errors(code):
    command = f"echo bad >&2; echo '{{\"systemMessage\": \"hi\"}}'; exit {code}"
    result = run_command(command, {"hook_event_name": "PreToolUse"})
    assert result == HookResult(errors=[f"`{command}` failed with exit code {code}: bad"])


@pytest.mark.parametrize("code", [1, 3, 127])
def test_a_block_printed_before_another_exit_code_still_blocks(code):
    """Claude Code ignores stdout on exit 1; the kit reads it for a block only, so a hook that
    prints its block and then crashes (or exits 1 thinking 1 means "no") never allows."""
    command = (f"echo bad >&2; echo '{{\"decision\": \"block\", \"reason\": \"no\", "
               f"\"systemMessage\": \"dropped\"}}'; exit {code}")
    result = run_command(command, {"hook_event_name": "PreToolUse"})
    assert (result.blocked, result.reason, result.system_message) == (True, "no", None)
    assert result.errors == [f"`{command}` failed with exit code {code}: bad; the block it "
                             "printed first stands"]
    # Stop hooks protect nothing: there the failure stays a non-blocking error
    assert not run_command(command, {"hook_event_name": "Stop"}).blocked


def test_a_block_printed_before_a_timeout_still_blocks(tmp_path):
    cmd = script(tmp_path, "slow.py", """
        import json, time
        print(json.dumps({"hookSpecificOutput": {"permissionDecision": "deny",
                                                 "permissionDecisionReason": "too risky"}}),
              flush=True)
        time.sleep(30)
    """)
    started = time.monotonic()
    result = run_command(cmd, {"hook_event_name": "PreToolUse"}, timeout=1.0)
    assert time.monotonic() - started < 10
    assert (result.blocked, result.reason) == (True, "too risky")
    assert result.errors == [f"`{cmd}` timed out after 1 s and was killed; the block it "
                             "printed first stands"]


@pytest.mark.parametrize("body, event", [
    ("print({'decision': 'block', 'reason': 'no'})", "PreToolUse"),      # a Python dict repr
    ("print('checking...'); print(json.dumps({'decision': 'block'}))", "PreToolUse"),
    ("print(json.dumps([{'decision': 'block'}]))", "PreToolUse"),        # JSON, not an object
    ("print('{\"decision\": \"block\"')", "UserPromptSubmit"),           # JSON cut short
])
def test_stdout_that_tries_to_be_json_and_fails_closed(tmp_path, body, event):
    cmd = script(tmp_path, "h.py", "import json\n" + body)
    result = run_command(cmd, {"hook_event_name": event})
    assert result.blocked and "(fail closed)" in result.reason
    assert "print json.dumps(answer) and nothing else" in result.reason
    withheld = run_command(cmd, {"hook_event_name": "PostToolUse"}) if event == "PreToolUse" \
        else None
    assert withheld is None or withheld.updated_output.startswith("[tool output withheld")


def test_plain_stdout_with_a_brace_is_still_plain():
    context = run_command("printf 'def f():\\n    return {1: 2}\\n'",
                          {"hook_event_name": "UserPromptSubmit"})
    assert (context.blocked, context.additional_context) == (False,
                                                             "def f():\n    return {1: 2}")
    scalar = run_command("echo '\"block\"'", {"hook_event_name": "PreToolUse"})
    assert not scalar.blocked and scalar.errors == [
        "`echo '\"block\"'` printed JSON str, not an object; ignored"]


def test_hook_that_never_reads_stdin_is_not_a_failure():
    big = {"hook_event_name": "PostToolUse", "tool_response": "x" * 1_000_000}
    result = run_command("echo '{\"systemMessage\": \"ignored stdin\"}'", big)
    assert (result.system_message, result.errors) == ("ignored stdin", [])


def test_timeout_while_writing_stdin_kills_the_hook():
    # The hook neither reads nor exits: a 1 MB payload fills the pipe, writing blocks.
    big = {"hook_event_name": "PostToolUse", "tool_response": "x" * 1_000_000}
    start = time.monotonic()
    result = run_command("sleep 30", big, timeout=0.5)
    elapsed = time.monotonic() - start
    assert elapsed < 5
    assert not result.blocked
    assert result.errors == ["`sleep 30` timed out after 0.5 s and was killed"]


def test_timeout_kills_the_whole_process_group(tmp_path):
    pid_file = tmp_path / "child.pid"
    result = run_command(f"sleep 30 & echo $! > '{pid_file}'; wait", {"hook_event_name": "Stop"},
                         timeout=0.5)
    assert "timed out" in result.errors[0]
    child = int(pid_file.read_text())
    for _ in range(50):
        if not is_running(child):
            break
        time.sleep(0.02)
    else:
        pytest.fail("the hook's background child survived the timeout")


def is_running(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie (a killed orphan may wait to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_background_child_holding_the_pipes_cannot_hang_the_agent(tmp_path):
    pid_file = tmp_path / "bg.pid"
    start = time.monotonic()
    result = run_command(f"sleep 20 & echo $! > '{pid_file}'; echo '{{\"systemMessage\": \"hi\"}}'",
                         {"hook_event_name": "Stop"}, timeout=10)
    elapsed = time.monotonic() - start
    bg = int(pid_file.read_text())
    still_running = is_running(bg)
    os.kill(bg, 9)
    assert elapsed < 3
    assert still_running  # the hook finished while its child still held stdout
    assert (result.system_message, result.errors) == ("hi", [])


def test_command_runs_in_cwd_with_claude_project_dir(tmp_path):
    result = run_command('printf \'{"systemMessage": "%s|%s"}\' "$PWD" "$CLAUDE_PROJECT_DIR"',
                         {"hook_event_name": "Stop"}, cwd=tmp_path)
    here = str(tmp_path.resolve())
    assert result.system_message in (f"{here}|{tmp_path}", f"{tmp_path}|{tmp_path}")


def test_command_hooks_and_python_handlers_mix_in_one_manager():
    m = HookManager()
    m.add_command("PreToolUse", "echo '{\"systemMessage\": \"from shell\"}'")
    m.on("PreToolUse", lambda p: {"hookSpecificOutput": {"additionalContext": "from python"}})
    m.add_command("PreToolUse", "echo 'dangerous' >&2; exit 2", matcher="Bash")
    allowed = fire(m, "PreToolUse", {"tool_name": "grep", "tool_input": {}})
    assert (allowed.blocked, allowed.system_message, allowed.additional_context) == (
        False, "from shell", "from python")
    blocked = fire(m, "PreToolUse", {"tool_name": "run_bash", "tool_input": {}})
    assert (blocked.blocked, blocked.reason) == (True, "dangerous")


# --------------------------------------------------------------------------- settings.json

def test_from_settings_loads_claude_code_shape(tmp_path):
    settings = {"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "echo no >&2; exit 2", "timeout": 7}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "true"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "true"}]}],
        "PostToolUse": [{"hooks": [{"type": "prompt", "prompt": "judge"}]}],
    }}
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings))
    m = HookManager.from_settings(path)
    ((matcher, hook),) = m.handlers("PreToolUse")
    assert (matcher, hook.command, hook.timeout_seconds) == ("Bash", "echo no >&2; exit 2", 7.0)
    assert m.handlers("Stop")[0][1].timeout_seconds == 60.0
    assert m.warnings == [
        "hooks.Notification: event not fired by mini-agent; skipped",
        "hooks.PostToolUse[0].hooks[0]: type 'prompt' not supported; skipped"]
    assert fire(m, "PreToolUse", {"tool_name": "run_bash", "tool_input": {}}).reason == "no"


@pytest.mark.parametrize("settings,message", [
    ({"hooks": []}, "settings.hooks must be an object"),
    ({"hooks": {"Stop": {}}}, "hooks.Stop must be a list"),
    ({"hooks": {"Stop": [{"matcher": "x"}]}}, r"hooks.Stop\[0\] needs a 'hooks' list"),
    ({"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}, "needs a non-empty 'command'"),
    ({"hooks": {"Stop": [{"hooks": [{"command": "true", "timeout": -1}]}]}},
     "timeout must be a positive number"),
    ({"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"command": "true"}]}]}},
     r"hooks.PreToolUse\[0\].matcher"),
])
def test_malformed_settings_raise_named_errors(settings, message):
    with pytest.raises(HookSettingsError, match=message):
        HookManager.from_settings(settings)


def test_shipped_settings_and_example_hooks_work_together(tmp_path):
    log = tmp_path / "calls.jsonl"
    os.environ["MINI_AGENT_HOOK_LOG"] = str(log)
    try:
        m = HookManager.from_settings(EXAMPLES_DIR / "settings.json", cwd=EXAMPLES_DIR.parent)
        blocked = fire(m, "PreToolUse", {"tool_name": "run_bash",
                                         "tool_input": {"command": "rm -rf /"}})
        ok = fire(m, "PreToolUse", {"tool_name": "run_bash",
                                    "tool_input": {"command": "rm -rf build"}})
        post = fire(m, "PostToolUse", {"tool_name": "read_file", "tool_input": {},
                                       "tool_response": "KEY=sk-ant-abcdefghijklmnop1234 ok"})
    finally:
        del os.environ["MINI_AGENT_HOOK_LOG"]
    assert blocked.blocked and "Blocked by policy: `rm -rf /`" in blocked.reason
    assert not ok.blocked and ok.errors == []
    assert post.updated_output == "KEY=[REDACTED] ok"
    assert post.additional_context == "1 secret(s) were redacted from this tool output."
    logged = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    # the destructive call was blocked before the logger ran; the allowed one was logged
    assert [e["tool_input"]["command"] for e in logged] == ["rm -rf build"]


@pytest.mark.parametrize("command,blocked", [
    ("rm -rf /", True), ("rm -fr ~", True), ("sudo rm -rf --no-preserve-root /", True),
    ("rm -r -f /", True), ("dd if=/dev/zero of=/dev/sda", True), ("mkfs.ext4 /dev/sdb1", True),
    ("git push --force origin main", True), ("rm -rf ./build", False), ("rm -rf /tmp/x", False),
    ("ls /", False), ("git push origin main", False),
])
def test_block_destructive_example(command, blocked):
    result = run_command(f'"{PY}" "{EXAMPLES_DIR / "block_destructive.py"}"',
                         {"hook_event_name": "PreToolUse", "tool_input": {"command": command}})
    assert result.blocked is blocked


def test_example_scripts_are_executable_with_shebangs():
    for name in ("block_destructive.py", "redact_secrets.py", "log_tool_calls.sh"):
        path = EXAMPLES_DIR / name
        assert os.access(path, os.X_OK), name
        assert path.read_text().startswith(("#!/usr/bin/env python3\n", "#!/bin/sh\n")), name


# --------------------------------------------------------------------------- adversarial input

def test_megabytes_of_plain_stdout_are_cut_to_the_context_cap():
    from mini_agent.harness.hooks import MAX_HOOK_OUTPUT_CHARS
    result = run_command("head -c 3000000 /dev/zero | tr '\\0' a",
                         {"hook_event_name": "UserPromptSubmit", "prompt": "hi"})
    assert result.additional_context == ("a" * MAX_HOOK_OUTPUT_CHARS
                                         + "\n[... truncated: 2,990,000 more characters]")
    assert result.errors == ["`head -c 3000000 /dev/zero | tr '\\0' a` printed 3,000,000 "
                             "characters; cut to 10,000"]


def test_exit_2_with_binary_stderr_blocks_with_a_readable_reason():
    result = run_command("printf '\\377\\376no' >&2; exit 2",
                         {"hook_event_name": "PreToolUse", "tool_name": "run_bash"})
    assert (result.blocked, result.reason) == (True, "\ufffd\ufffdno")


@pytest.mark.parametrize("output, error", [
    ({"additionalContext": {"a": 1}},
     "hook output additionalContext must be a string, got dict; ignored"),
    ({"systemMessage": 5}, "hook output systemMessage must be a string, got int; ignored"),
])
def test_output_fields_of_the_wrong_type_are_ignored_and_reported(output, error):
    result = parse_hook_output(output, event="PreToolUse")
    assert result == HookResult(errors=[error])


def test_block_reasons_that_are_not_strings_become_strings():
    assert parse_hook_output({"decision": "block", "reason": 5}).reason == "5"
    assert parse_hook_output({"continue": False, "stopReason": [1]}).stop_reason == "[1]"


@pytest.mark.parametrize("settings, message", [
    ([], "settings must be a JSON object, got list"),
    ({"hooks": {"PreToolUse": [{"matcher": 5, "hooks": [{"command": "true"}]}]}},
     "hooks.PreToolUse[0].matcher must be a string"),
    ({"hooks": {"PreToolUse": [{"hooks": [{"command": "true", "timeout": float("inf")}]}]}},
     "hooks.PreToolUse[0].hooks[0].timeout must be a positive number"),
    ({"hooks": {"PreToolUse": [{"hooks": [{"command": "true", "timeout": True}]}]}},
     "hooks.PreToolUse[0].hooks[0].timeout must be a positive number"),
])
def test_settings_of_the_wrong_shape_are_a_settings_error(tmp_path, settings, message):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings))
    with pytest.raises(HookSettingsError) as info:
        HookManager.from_settings(path)
    assert str(info.value) == message


# --------------------------------------------------------------------------- fail closed

BIG_BLOCK = ("import json, sys; sys.stdout.write(json.dumps({'decision': 'block', "
             "'reason': 'big no', 'pad': 'x' * %d}))")


@pytest.mark.parametrize("pad", [10, 3_000_000])
def test_a_block_in_megabytes_of_json_still_blocks(tmp_path, pad):
    cmd = f'"{PY}" -c "{BIG_BLOCK % pad}"'
    result = run_command(cmd, {"hook_event_name": "PreToolUse", "tool_name": "run_bash"})
    assert (result.blocked, result.reason) == (True, "big no")
    assert result.errors == ["hook output field 'pad' is not in Claude Code's hook output "
                             "contract; ignored"]


def test_output_over_the_parse_limit_fails_closed(monkeypatch):
    import mini_agent.harness.command_hooks as command_hooks
    monkeypatch.setattr(command_hooks, "MAX_HOOK_PARSE_BYTES", 1000)
    cmd = "head -c 5000 /dev/zero | tr '\\0' ' '"
    pre = run_command(cmd, {"hook_event_name": "PreToolUse", "tool_name": "run_bash"})
    assert pre.blocked and "5,000 bytes on stdout" in pre.reason and "fail closed" in pre.reason
    post = run_command(cmd, {"hook_event_name": "PostToolUse", "tool_name": "run_bash"})
    assert not post.blocked and post.updated_output.startswith("[tool output withheld")
    stop = run_command(cmd, {"hook_event_name": "Stop"})
    assert (stop.blocked, len(stop.errors)) == (False, 1)


def test_json_nested_too_deeply_fails_closed():
    cmd = f'"{PY}" -c "print(\'[\' * 200000)"'
    result = run_command(cmd, {"hook_event_name": "PreToolUse", "tool_name": "run_bash"})
    assert result.blocked and "nested too deeply" in result.reason


def test_agent_never_runs_a_tool_whose_hook_blocks_in_huge_output(tmp_path):
    from mini_agent.harness.agent import Agent
    from mini_agent.offline import ScriptedBrain, offline_async_client
    from mini_agent.harness.tools import Tool
    from mini_agent.core.view import full_view
    ran = []
    tool = Tool(name="touch", description="d", input_schema={"type": "object"},
                run=lambda i: ran.append(i) or "ran", safety="write")
    brain = ScriptedBrain([{"content": [{"type": "tool_use", "id": "toolu_1", "name": "touch",
                                         "input": {}}], "stop_reason": "tool_use"}, "done"])
    hooks = HookManager()
    hooks.add_command("PreToolUse", f'"{PY}" -c "{BIG_BLOCK % 3_000_000}"')
    agent = Agent(offline_async_client(brain), tools={"touch": tool}, hooks=hooks,
                  view_policy=full_view)
    agent.run("go")
    assert ran == []
    result = agent.history[2]["content"][0]
    assert (result["is_error"], result["content"]) == (True, "Blocked by hook: big no")


# --------------------------------------------------------------------------- output contract

@pytest.mark.parametrize("output", [
    5, {"a": 1}, [1, 2], [{"type": "text", "text": ""}], [{"type": "bogus"}], [],
    [{"type": "text", "text": "x", "extra": 1}],
    [{"type": "image", "source": {"type": "base64", "media_type": "text/plain", "data": "x"}}],
])
def test_bad_updated_tool_output_is_ignored_and_reported(output):
    m = HookManager()
    m.on("PostToolUse", lambda p: {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                                          "updatedToolOutput": output}})
    result = fire(m, "PostToolUse", {"tool_name": "grep", "tool_response": "raw"})
    assert result.updated_output is None
    assert len(result.errors) == 1 and result.errors[0].startswith(
        "hook output updatedToolOutput ignored: ")


def test_a_handler_returning_a_bad_hook_result_is_checked_too():
    m = HookManager()
    m.on("PostToolUse", lambda p: HookResult(updated_output=[{"type": "bogus"}],
                                             permission_decision="maybe",
                                             additional_context="c" * 20_000))
    result = fire(m, "PostToolUse", {"tool_name": "grep", "tool_response": "raw"})
    assert (result.updated_output, result.permission_decision) == (None, None)
    assert len(result.additional_context) < 10_100
    assert len(result.errors) == 3


@pytest.mark.parametrize("output, error", [
    ({"hookSpecificOutput": {"permissionDecision": "allow"}},
     "hook output permissionDecision is not part of the PostToolUse output (only "
     "PreToolUse); ignored"),
    ({"hookSpecificOutput": {"updatedInput": {"a": 1}}},
     "hook output updatedInput is not part of the PostToolUse output (only PreToolUse); "
     "ignored"),
    ({"continue": "false"}, "hook output continue must be a boolean, got str; ignored"),
    ({"decision": "nope"}, "hook output decision must be one of block, approve, got 'nope'; "
                           "ignored"),
    ({"hookSpecificOutput": {"hookEventName": "Stop"}},
     "hook output hookEventName 'Stop' does not match the event 'PostToolUse'; ignored"),
    ({"hookSpecificOutput": 3}, "hook output hookSpecificOutput must be an object, got int; "
                                "ignored"),
    ({"surprise": 1}, "hook output field 'surprise' is not in Claude Code's hook output "
                      "contract; ignored"),
])
def test_fields_outside_the_contract_are_ignored_and_reported(output, error):
    assert parse_hook_output(output, event="PostToolUse") == HookResult(errors=[error])


@pytest.mark.parametrize("output", [
    {"decision": "Block"}, {"decision": "DENY"}, {"decision": " block "},
    {"hookSpecificOutput": {"permissionDecision": "DENY"}}, {"permissionDecision": "Deny"},
    {"hookSpecificOutput": {"permissionDecision": "block"}},
    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "decision": "block"}},
])
def test_a_block_in_another_spelling_still_blocks(output):
    result = parse_hook_output(output, event="PreToolUse")
    assert result.blocked and result.reason == "blocked by a PreToolUse hook"
    assert len(result.errors) == 1 and ("read as" in result.errors[0]
                                        or "belongs at the top level" in result.errors[0])


@pytest.mark.parametrize("output", [
    {"decision": "nope"}, {"decision": True}, {"decision": 1}, {"decision": ["block"]},
    {"hookSpecificOutput": {"permissionDecision": "maybe"}},
    {"hookSpecificOutput": {"permissionDecision": False}},
])
def test_a_decision_the_kit_cannot_read_fails_closed_where_a_block_protects(output):
    for event in ("PreToolUse", "UserPromptSubmit"):
        if "hookSpecificOutput" in output and event != "PreToolUse":
            continue
        result = parse_hook_output(output, event=event)
        assert result.blocked and result.reason.startswith(
            f"the {event} hook answered a decision the kit cannot read")
        assert result.reason.endswith("blocked to be safe (fail closed)")
    after = parse_hook_output(output, event="PostToolUse")   # the tool already ran
    assert not after.blocked and after.errors[0].endswith("ignored")


def test_allow_in_another_spelling_allows_and_null_is_no_opinion():
    allow = parse_hook_output({"hookSpecificOutput": {"permissionDecision": "Allow"}},
                              event="PreToolUse")
    assert (allow.blocked, allow.permission_decision) == (False, "allow")
    assert not parse_hook_output({"decision": "APPROVE"}, event="PreToolUse").blocked
    assert not parse_hook_output({"decision": None}, event="PreToolUse").blocked


def test_a_python_handler_returning_deny_without_blocked_still_blocks():
    from mini_agent.core.hook_output import check_result
    m = HookManager()
    m.on("PreToolUse", lambda p: HookResult(permission_decision="Deny", reason="no"))
    result = fire(m, "PreToolUse", {"tool_name": "run_bash", "tool_input": {}})
    assert (result.blocked, result.reason, result.permission_decision) == (True, "no", "deny")
    odd = check_result(HookResult(permission_decision="later"), "PreToolUse")
    assert odd.blocked and odd.permission_decision is None


@pytest.mark.parametrize("output", [
    5, {"a": 1}, [1, 2], [{"type": "text", "text": ""}], [{"type": "bogus"}]])
def test_agent_survives_any_updated_tool_output(output):
    from mini_agent.harness.agent import Agent
    from mini_agent.core.hook_output import HookNotice
    from mini_agent.offline import ScriptedBrain, offline_async_client
    from mini_agent.harness.tools import Tool
    from mini_agent.core.view import full_view
    tool = Tool(name="echo", description="d", input_schema={"type": "object"},
                run=lambda i: "tool says hi", safety="read-only")
    brain = ScriptedBrain([{"content": [{"type": "tool_use", "id": "toolu_1", "name": "echo",
                                         "input": {}}], "stop_reason": "tool_use"}, "done"])
    hooks = HookManager()
    hooks.on("PostToolUse", lambda p: {"hookSpecificOutput": {"updatedToolOutput": output}})
    agent = Agent(offline_async_client(brain), tools={"echo": tool}, hooks=hooks,
                  view_policy=full_view)
    result = agent.run("go")
    assert result.exit_status == "completed"
    assert agent.history[2]["content"][0]["content"] == "tool says hi"
    assert any(isinstance(e, HookNotice) and e.errors for e in result.events)


# --------------------------------------------------------------------------- hostile settings

def test_hostile_settings_files_raise_the_settings_error_with_the_path(tmp_path):
    cases = {
        "digits.json": ('{"hooks": {"Stop": [{"hooks": [{"command": "true", "timeout": '
                        + "9" * 400 + "}]}]}}").encode(),
        "latin1.json": b'{"hooks": {"Stop": [{"hooks": [{"command": "echo \xe9"}]}]}}',
        "deep.json": b"[" * 100_000 + b"]" * 100_000,
        "broken.json": b'{"hooks": ',
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "folder.json").mkdir()
    for name in [*cases, "folder.json"]:
        with pytest.raises(HookSettingsError) as info:
            HookManager.from_settings(tmp_path / name)
        expected = "timeout must be a positive number" if name == "digits.json" \
            else str(tmp_path / name)
        assert expected in str(info.value), name
    with pytest.raises(FileNotFoundError):
        HookManager.from_settings(tmp_path / "missing.json")


@pytest.mark.parametrize("text", ["rm -rf x \udcff", "\ud800 rm -rf /"])
def test_a_payload_with_lone_surrogates_still_reaches_the_hook(tmp_path, text):
    """A tool input holding a lone surrogate (a JSON escape like \\udcff in the model's tool
    call; os.fsencode turns it into a raw byte) must not skip the PreToolUse hook: a hook that
    cannot be fed would be a non-blocking error, and the tool would run unchecked."""
    cmd = script(tmp_path, "h.py", """
        import json, sys
        p = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        print(p["tool_input"]["command"].encode("utf-8", "surrogatepass").hex(), file=sys.stderr)
        sys.exit(2)
    """)
    manager = HookManager()
    manager.add_command("PreToolUse", cmd)
    result = fire(manager, "PreToolUse", {"tool_name": "run_bash", "tool_use_id": "t",
                                          "tool_input": {"command": text}})
    assert result.blocked and result.errors == []
    assert result.reason == text.encode("utf-8", "surrogatepass").hex()
    # a payload that UTF-8 can carry is sent as before, non-ASCII characters unescaped
    echo = run_command(f"{PY} -c \"import sys; sys.stderr.write(sys.stdin.read()); sys.exit(2)\"",
                       {"hook_event_name": "PreToolUse", "tool_input": {"command": "é"}})
    assert '"command": "é"' in echo.reason


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), True, "5", 10**9])
def test_a_timeout_that_would_skip_the_hook_is_refused(timeout):
    """``timeout_seconds=0`` ("no limit") used to time a PreToolUse guard out before it ran:
    a non-blocking error, so every tool call went through."""
    with pytest.raises(ValueError, match="timeout_seconds must be a number of seconds above 0"):
        HookManager().add_command("PreToolUse", "exit 2", timeout_seconds=timeout)
    with pytest.raises(ValueError, match="non-blank command"):
        CommandHook("  ")


@pytest.mark.parametrize("output", ["block", False, True, 0, ["block"]])
def test_a_handler_returning_something_unreadable_fails_closed_where_a_block_protects(output):
    def guard(payload):
        return output
    for event in ("PreToolUse", "UserPromptSubmit"):
        m = HookManager()
        m.on(event, guard)
        result = fire(m, event, {"tool_name": "run_bash", "prompt": "p"})
        assert result.blocked and result.reason.startswith(
            f"{event} hook guard returned {type(output).__name__} ")
        assert result.reason.endswith("not a dict, a HookResult or None; blocked to be safe "
                                      "(fail closed)")
    after = HookManager()
    after.on("PostToolUse", guard)
    result = fire(after, "PostToolUse", {"tool_name": "run_bash"})
    assert not result.blocked and result.errors[0].endswith("; ignored")


def test_ask_blocks_since_the_kit_has_no_one_to_ask():
    """Claude Code shows a confirmation dialog for "ask"; the kit has none, and used to run
    the call as if the hook had said "allow"."""
    m = HookManager()
    m.on("PreToolUse", lambda p: {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "Ask",
        "permissionDecisionReason": "force push"}})
    result = fire(m, "PreToolUse", {"tool_name": "run_bash", "tool_input": {}})
    assert (result.blocked, result.permission_decision) == (True, "ask")
    assert result.reason == ("force push; mini-agent runs without a person to confirm, so the "
                             "call is refused (permissionDecision 'ask')")
    bare = fire(m.__class__(), "PreToolUse", {})
    assert not bare.blocked
    python = HookManager()
    python.on("PreToolUse", lambda p: HookResult(permission_decision="ask"))
    assert fire(python, "PreToolUse", {"tool_name": "t"}).reason.startswith(
        "the hook asks for a confirmation; mini-agent runs without a person")


@pytest.mark.parametrize("data, media_type, problem", [
    ("iVBOR", "image/png", "invalid base64 data"),
    ("iVBORw0KGgo=", "image/gif", "Image does not match the provided media type image/gif"),
])
def test_a_replacement_image_the_api_would_refuse_is_ignored(data, media_type, problem):
    """A PostToolUse hook's updatedToolOutput image that does not decode used to reach the
    history: the API refused that request and every later one (the image stayed)."""
    from mini_agent.core.hook_output import tool_output_problem
    image = {"type": "image", "source": {"type": "base64", "media_type": media_type,
                                         "data": data}}
    assert tool_output_problem([image]) == f"image block 0: {problem}"
    result = parse_hook_output({"hookSpecificOutput": {"updatedToolOutput": [image]}},
                               event="PostToolUse")
    assert result.updated_output is None
    assert result.errors == [f"hook output updatedToolOutput ignored: image block 0: {problem}"]
