"""``--settings FILE``: the REPL and ``demo`` run a settings file's command hooks, through main()."""

import io
import json
import shlex
import sys

import pytest

from mini_agent import cli
from mini_agent.demo import PROJECT_DIR

BLOCK_EDITS = """\
import json, pathlib, sys
payload = json.load(sys.stdin)
pathlib.Path(sys.argv[1]).write_text(payload["tool_name"] + " " + payload["tool_input"]["path"])
print("edits are frozen during the workshop", file=sys.stderr)
sys.exit(2)
"""

BLOCK_TWICE = """\
import json, pathlib, sys
counter = pathlib.Path(sys.argv[1])
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
if n < 2:
    print(json.dumps({"decision": "block", "reason": f"run the tests again ({n + 1})"}))
"""


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def hook_command(tmp_path, name, source, *args):
    script = tmp_path / name
    script.write_text(source)
    return shlex.join([sys.executable, str(script), *map(str, args)])


def settings_file(tmp_path, hooks):
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"hooks": hooks}))
    return path


def prompts(*lines):
    queue = list(lines)

    def read(_prompt):
        if not queue:
            raise EOFError
        return queue.pop(0)
    return read


def test_a_pre_tool_use_hook_blocks_the_demo_edit_and_the_file_stays_as_it_was(tmp_path):
    seen = tmp_path / "seen.txt"
    settings = settings_file(tmp_path, {"PreToolUse": [{"matcher": "edit_file", "hooks": [
        {"type": "command", "command": hook_command(tmp_path, "block.py", BLOCK_EDITS, seen)}]}]})
    out = io.StringIO()
    code = cli.main(["demo", "--settings", str(settings), "--workspace", str(tmp_path),
                     "--keep-workspace", "--max-turns", "7"], out=out)
    text = out.getvalue()
    assert code == 0
    assert text.splitlines()[1] == (f"hooks: the command hooks of {settings} (--settings; "
                                    f"run in {__import__('pathlib').Path.cwd()})")
    results = [line for line in text.splitlines() if line.startswith("[tool_result] edit_file")]
    assert results and all(line.endswith("error (1 line) Blocked by hook: edits are frozen "
                                          "during the workshop") for line in results)
    assert seen.read_text() == "edit_file invoicing/discounts.py"   # the hook saw the call
    project = tmp_path / "project"
    original = (PROJECT_DIR / "invoicing" / "discounts.py").read_text()
    assert (project / "invoicing" / "discounts.py").read_text() == original
    assert "if quantity > tier.min_quantity:" in original   # the planted bug is still there
    assert not list(project.rglob("*.bak*")), "the edit tool never ran, so it left no backup"


def test_the_repl_prints_a_line_for_each_of_two_stop_blocks_then_completes(tmp_path):
    counter = tmp_path / "count"
    settings = settings_file(tmp_path, {"Stop": [{"hooks": [
        {"type": "command", "command": hook_command(tmp_path, "stop.py", BLOCK_TWICE, counter)}]}]})
    out = io.StringIO()
    code = cli.main(["--settings", str(settings), "--sessions-dir", str(tmp_path / "sessions")],
                    out=out, read=prompts("hello"))
    lines = out.getvalue().splitlines()
    assert code == 0
    assert [line for line in lines if line.startswith("[Stop hook blocked")] == [
        "[Stop hook blocked 1/8] run the tests again (1); the model goes on with the reason",
        "[Stop hook blocked 2/8] run the tests again (2); the model goes on with the reason"]
    assert counter.read_text() == "3"   # the third Stop was allowed
    assert any(line.endswith("[completed after 5 model requests]") for line in lines)


def test_demo_takes_the_flag_before_or_after_the_command(tmp_path):
    counter = tmp_path / "count"
    settings = settings_file(tmp_path, {"Stop": [{"hooks": [
        {"type": "command", "command": hook_command(tmp_path, "stop.py", BLOCK_TWICE, counter)}]}]})
    out = io.StringIO()
    assert cli.main(["--settings", str(settings), "demo", "--workspace", str(tmp_path)],
                    out=out) == 0
    assert out.getvalue().count("[Stop hook blocked ") == 2
    assert counter.read_text() == "3"


def test_a_claude_settings_file_in_the_current_folder_is_never_read(tmp_path, monkeypatch):
    (tmp_path / ".claude").mkdir()
    marker = tmp_path / "ran.txt"
    stray = hook_command(tmp_path, "stray.py", BLOCK_EDITS, marker)
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(
        {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": stray}]}]}}))
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert cli.main(["demo", "--workspace", str(tmp_path)], out=out) == 0
    assert "Blocked by hook" not in out.getvalue() and "hooks:" not in out.getvalue()
    assert not marker.exists()


@pytest.mark.parametrize("content, message", [
    ('{"hooks": {"Stop": {}}}', "settings.json: hooks.Stop must be a list"),
    ('{"hooks": {"Stop": [{"matcher": "*"}]}}', "settings.json: hooks.Stop[0] needs a 'hooks' list"),
    ("{bad", "settings.json: the settings file is not valid JSON (Expecting property name"),
    ("[1]", "settings.json: settings must be a JSON object, got list"),
])
def test_a_bad_settings_file_exits_2_with_the_loaders_message(tmp_path, capsys, content,
                                                              message):
    settings = tmp_path / "settings.json"
    settings.write_text(content)
    for argv in (["demo", "--settings", str(settings), "--workspace", str(tmp_path)],
                 ["--settings", str(settings)]):
        out = io.StringIO()
        assert cli.main(argv, out=out, read=prompts("hello")) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"mini-agent: --settings: {tmp_path}/") and message in err
        assert "Traceback" not in err and len(err.splitlines()) == 1
        assert out.getvalue() == ""   # nothing ran: no mode line, no workspace
    assert not (tmp_path / "project").exists()


def test_a_missing_file_and_a_command_without_an_agent_exit_2(tmp_path, capsys):
    missing = tmp_path / "nope.json"
    assert cli.main(["--settings", str(missing)], out=io.StringIO()) == 2
    assert capsys.readouterr().err == f"mini-agent: --settings: no such file: {missing}\n"
    assert cli.main(["--settings", str(missing), "sessions"], out=io.StringIO()) == 2
    assert capsys.readouterr().err == ("mini-agent: error: --settings applies to the REPL and "
                                       "demo, not sessions\n")


def test_skipped_entries_are_named_on_stderr(tmp_path, capsys):
    settings = settings_file(tmp_path, {"Notification": [{"hooks": [
        {"type": "command", "command": "true"}]}]})
    assert cli.main(["--settings", str(settings), "--sessions-dir", str(tmp_path / "s")],
                    out=io.StringIO(), read=prompts()) == 0
    assert capsys.readouterr().err == ("mini-agent: --settings: hooks.Notification: event "
                                       "not fired by mini-agent; skipped\n")


def test_the_help_says_the_flag_is_explicit(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--settings FILE" in text and "Never read by itself: not even .claude/settings.json" \
        in text
