"""Tests for mini_agent.cli: the offline demo end to end, the REPL, the subcommands' wiring."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mini_agent import cli, console
from mini_agent.core.sample_sessions import sample_session_jsonl
from mini_agent.demo import PROJECT_DIR


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def lines_from(*answers):
    it = iter(answers)

    def read(prompt):
        try:
            return next(it)
        except StopIteration:
            raise EOFError
    return read


def test_demo_offline_fixes_the_project(tmp_path):
    out = io.StringIO()
    code = cli.main(["demo", "--workspace", str(tmp_path), "--keep-workspace"], out=out)
    text = out.getvalue()
    assert code == 0
    assert text.splitlines()[0].startswith("offline:")
    assert text.count("[tool_use]") >= 15
    uses = {tuple(line.split()[1:3]) for line in text.splitlines()
            if line.startswith("[tool_use] ")}
    answered = [tuple(line.split()[1:3]) for line in text.splitlines()
                if line.startswith("[tool_result] ")]
    assert sorted(answered) == sorted(uses)  # each result names the tool and the id it answers
    assert "[completed after 13 model requests]" in text
    readme = (Path(cli.__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    shown = readme.split("## What `mini-agent demo` shows", 1)[1].split("```\n", 2)[1]
    assert text.split("workspace kept at ")[0].endswith(shown), \
        "README's demo output must be the demo's last lines"
    stats = next(line for line in text.splitlines() if line.startswith("stats: "))
    assert "masked:" in stats
    project = tmp_path / "project"
    before = subprocess.run([sys.executable, "run_tests.py"], cwd=PROJECT_DIR,
                            capture_output=True, text=True)
    after = subprocess.run([sys.executable, "run_tests.py"], cwd=project, capture_output=True,
                           text=True)
    assert before.returncode == 1, "the bundled project must start broken"
    assert after.returncode == 0, after.stdout


def test_demo_is_deterministic(tmp_path):
    def stats_line(where):
        out = io.StringIO()
        cli.main(["demo", "--workspace", str(where)], out=out)
        return [line for line in out.getvalue().splitlines() if line.startswith("stats: ")]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "mine.txt").write_text("keep me")
    assert stats_line(tmp_path / "a") == stats_line(tmp_path / "b")
    # without --keep-workspace only the copy is removed, never the directory given
    assert (tmp_path / "a" / "mine.txt").read_text() == "keep me"
    assert not (tmp_path / "a" / "project").exists()


def test_demo_runs_through_the_console_script_entry_point(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mini_agent.cli", "demo", "--workspace",
                           str(tmp_path)], capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in __import__("os").environ.items()
                               if k != "ANTHROPIC_API_KEY"})
    assert proc.returncode == 0, proc.stderr
    assert "offline:" in proc.stdout and "stats: turns:" in proc.stdout


def test_repl_commands(tmp_path):
    out = io.StringIO()
    code = cli.main(["--sessions-dir", str(tmp_path), "--workspace", str(tmp_path)], out=out,
                    read=lines_from("/history", "/stats", "Hello there", "/stats", "/history",
                                    "/nope", "/quit"))
    text = out.getvalue()
    assert code == 0
    assert "the history is empty: no messages yet (type a prompt)" in text and "[]" not in text
    assert "turns: 0   messages: 0   raw: ~0 tok" in text
    assert "turns: 1   messages: 2   raw: ~" in text
    assert '"role": "user"' in text and "commands: /stats, /history, /quit" in text
    assert f"workspace: {tmp_path} (given with --workspace; the agent can edit files" in text
    assert len(list(tmp_path.glob("*.jsonl"))) == 1


def test_resume_from_the_cli(tmp_path):
    cli.main(["--sessions-dir", str(tmp_path), "--workspace", str(tmp_path)], out=io.StringIO(),
             read=lines_from("Hello there"))
    session_id = next(tmp_path.glob("*.jsonl")).stem
    out = io.StringIO()
    code = cli.main(["--sessions-dir", str(tmp_path), "--workspace", str(tmp_path),
                     "--resume", session_id], out=out, read=lines_from("/stats"))
    assert code == 0
    assert f"resumed {session_id}: 2 messages" in out.getvalue()
    assert "turns: 0 since resume   messages: 2" in out.getvalue()  # requests since resume
    assert cli.main(["--sessions-dir", str(tmp_path), "--resume", "missing"],
                    out=io.StringIO(), read=lines_from()) == 2


def test_sessions_grade_and_make_exercises_are_wired(tmp_path, capsys):
    cli.main(["--sessions-dir", str(tmp_path), "--workspace", str(tmp_path)], out=io.StringIO(),
             read=lines_from("Hello"))
    assert cli.main(["--sessions-dir", str(tmp_path), "sessions"]) == 0
    assert tmp_path.glob("*.jsonl").__next__().stem in capsys.readouterr().out
    assert cli.main(["grade", "99"]) == 2
    assert "valid ids: 01, 02" in capsys.readouterr().err
    repo = Path(__file__).resolve().parent.parent
    out = io.StringIO()
    assert cli.main(["grade", "3", "--implementation", "solutions", "--root", str(repo)],
                    out=out) == 0
    assert out.getvalue().startswith(f"Exercise 03: {repo}/solutions/03_masking.py")
    assert cli.main(["make-exercises", "--check", "--root", str(repo)],
                    out=io.StringIO()) in (0, 1)


def test_event_printer_shows_tools_and_results():
    from mini_agent.harness.executor import ToolOutcome
    from mini_agent.core.streaming import TextDelta, ToolUseReady
    from mini_agent.harness.loop import LoopEnd, ToolResult
    out = io.StringIO()
    show = console.event_printer(out)
    show(TextDelta("Hi"))
    show(ToolUseReady({"type": "tool_use", "id": "t", "name": "grep", "input": {"pattern": "x"}}))
    show(ToolResult(ToolOutcome({"type": "tool_result", "tool_use_id": "t", "content": "a\nb"},
                                "grep", {}, 0.0, 0.0, 0.0)))
    show(ToolResult(ToolOutcome({"type": "tool_result", "tool_use_id": "u", "content": "no",
                                 "is_error": True}, "read_file", {}, 0.0, 0.0, 0.0)))
    show(LoopEnd("completed", 1))
    assert out.getvalue() == ('Hi\n[tool_use] grep t {"pattern": "x"}\n'
                              "[tool_result] grep t ok (2 lines) a b\n"
                              "[tool_result] read_file u error (1 line) no\n"
                              "[completed after 1 model request]\n")
    show(LoopEnd("max_turns_reached", 13))
    assert out.getvalue().endswith("[max_turns_reached after 13 model requests]\n")


def _scratch(tmp_path):
    """A stand-in for copy_demo_project: ``<tmp_path>/scratch/project``, created."""
    project = tmp_path / "scratch" / "project"
    project.mkdir(parents=True)
    return project


def test_failed_resume_removes_the_scratch_workspace(tmp_path, monkeypatch, capsys):
    made = []

    def copy(parent=None):
        made.append(_scratch(tmp_path))
        return made[-1]
    monkeypatch.setattr(cli, "copy_demo_project", copy)
    assert cli.main(["--sessions-dir", str(tmp_path), "--resume", "missing"],
                    out=io.StringIO(), read=lines_from()) == 2
    assert made and not made[0].parent.exists()


def test_resume_of_a_session_that_is_a_directory_is_exit_2(tmp_path, capsys):
    (tmp_path / "odd.jsonl").mkdir()
    assert cli.main(["--sessions-dir", str(tmp_path), "--workspace", str(tmp_path),
                     "--resume", "odd"], out=io.StringIO(), read=lines_from()) == 2
    assert "mini-agent: cannot resume:" in capsys.readouterr().err


def _failing_client(kind):
    """An AsyncAnthropic client whose every request fails as ``kind`` says (no retries)."""
    import anthropic
    import httpx2
    from mini_agent.offline import FaultPlan, offline_async_client
    if kind == "overloaded":
        return offline_async_client(max_retries=0, faults=FaultPlan(overloaded_at={1, 2, 3}))

    def handle(request):
        if kind == "unreachable":
            raise httpx2.ConnectError("name resolution failed", request=request)
        return httpx2.Response(401, json={"type": "error", "error": {
            "type": "authentication_error", "message": "invalid x-api-key"}})
    return anthropic.AsyncAnthropic(api_key="sk-ant-invalid", max_retries=0,
                                    base_url="http://api.invalid",
                                    http_client=httpx2.AsyncClient(
                                        transport=httpx2.MockTransport(handle)))


API_FAILURES = {
    "invalid key": ("invalid", "rejected the key (401 authentication_error: invalid x-api-key)"),
    "unreachable": ("unreachable", "cannot reach the Anthropic API"),
    "overloaded": ("overloaded", "the offline API answered 529 overloaded_error"),
}


@pytest.mark.parametrize("name", sorted(API_FAILURES))
def test_demo_reports_an_api_error_in_one_line_and_exits_1(name, tmp_path, monkeypatch, capsys):
    kind, what = API_FAILURES[name]
    monkeypatch.setattr(cli, "make_client", lambda workspace: _failing_client(kind))
    out = io.StringIO()
    assert cli.main(["demo", "--workspace", str(tmp_path)], out=out) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("mini-agent: ") and what in err
    # the offline API's fault plan stands in for an overloaded API: no key advice there
    assert err.rstrip().endswith("; try again" if kind == "overloaded"
                                 else "unset ANTHROPIC_API_KEY to run offline")
    assert not (tmp_path / "project").exists()  # the copy is still cleaned up


def test_repl_reports_an_api_error_and_returns_to_the_prompt(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli, "make_client", lambda workspace: _failing_client("invalid"))
    out = io.StringIO()
    code = cli.main(["--sessions-dir", str(tmp_path), "--workspace", str(tmp_path)], out=out,
                    read=lines_from("Hello there", "/stats", "/quit"))
    assert code == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rejected the key" in err
    assert "turns: 0   messages: 1   raw: ~" in out.getvalue()  # the prompt is kept


def test_repl_says_where_it_works_offline(tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "copy_demo_project", lambda parent=None: _scratch(tmp_path))
    out = io.StringIO()
    cli.main(["--sessions-dir", str(tmp_path)], out=out, read=lines_from("/quit"))
    line = next(x for x in out.getvalue().splitlines() if x.startswith("workspace: "))
    assert line.startswith(f"workspace: {tmp_path / 'scratch' / 'project'} "
                           "(a fresh copy of the demo project; try: ")


def test_repl_says_where_it_works_online(tmp_path, monkeypatch):
    from mini_agent.offline import offline_async_client
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setattr(cli, "make_client", lambda workspace: offline_async_client())
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    cli.main(["--sessions-dir", str(tmp_path / "s")], out=out, read=lines_from("/quit"))
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("online:")
    assert lines[2] == (f"workspace: {tmp_path} (the current folder; the agent can edit files "
                        "and run commands there)")


def _session_meta(directory):
    import json
    path = next(directory.glob("*.jsonl"))
    return path.stem, json.loads(path.read_text().splitlines()[0])


def test_resume_reuses_the_workspace_the_session_recorded(tmp_path):
    sessions, work = tmp_path / "sessions", tmp_path / "work"
    work.mkdir()
    cli.main(["--sessions-dir", str(sessions), "--workspace", str(work)], out=io.StringIO(),
             read=lines_from("Hello there"))
    session_id, meta = _session_meta(sessions)
    assert (meta["type"], meta["event"], meta["workspace"]) == ("meta", "session_start", str(work))
    out = io.StringIO()
    assert cli.main(["--sessions-dir", str(sessions), "--resume", session_id], out=out,
                    read=lines_from()) == 0
    assert f"workspace: {work} (where session {session_id} worked; the agent can edit" in \
        out.getvalue()
    assert "warning" not in out.getvalue()


def test_resume_warns_when_the_workspace_is_a_fresh_copy(tmp_path, monkeypatch):
    sessions = tmp_path / "sessions"
    copies = iter(range(10))
    monkeypatch.setattr(cli, "copy_demo_project",
                        lambda parent=None: _scratch(tmp_path / f"run{next(copies)}"))
    cli.main(["--sessions-dir", str(sessions)], out=io.StringIO(), read=lines_from("Hello"))
    session_id, meta = _session_meta(sessions)
    gone = tmp_path / "run0" / "scratch" / "project"
    assert meta["workspace"] == str(gone) and not gone.exists()  # removed at exit
    out = io.StringIO()
    assert cli.main(["--sessions-dir", str(sessions), "--resume", session_id], out=out,
                    read=lines_from()) == 0
    assert (f"warning: the workspace is a fresh copy of the demo project; earlier edits of "
            f"session {session_id} are not in it (its workspace {gone} no longer exists)"
            in out.getvalue().splitlines())


def test_resume_of_a_session_without_a_recorded_workspace_warns(tmp_path, monkeypatch):
    import json
    monkeypatch.setattr(cli, "copy_demo_project", lambda parent=None: _scratch(tmp_path))
    (tmp_path / "old.jsonl").write_text("".join(json.dumps(e) + "\n" for e in [
        {"type": "meta", "event": "session_start", "model": "m", "cwd": "/x", "timestamp": 1.0},
        {"type": "message", "message": {"role": "user", "content": "Hi"}, "timestamp": 1.0}]))
    out = io.StringIO()
    assert cli.main(["--sessions-dir", str(tmp_path), "--resume", "old"], out=out,
                    read=lines_from()) == 0
    assert "earlier edits of session old are not in it (it recorded no workspace)" in \
        out.getvalue()


def test_make_exercises_never_overwrites_edits_without_force(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # make-exercises works on the folder holding solutions/
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "42_demo.py").write_text(
        "def f():\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n")
    out = io.StringIO()
    assert cli.main(["make-exercises"], out=out) == 0
    assert out.getvalue() == "wrote exercises/42_demo.py\n"
    exercise = tmp_path / "exercises" / "42_demo.py"
    exercise.write_text(exercise.read_text() + "# my work\n")
    out = io.StringIO()
    assert cli.main(["make-exercises"], out=out) == 0  # keeping a learner's edits is normal
    assert exercise.read_text().endswith("# my work\n")
    text = out.getvalue()
    assert text.startswith("kept exercises/42_demo.py: it differs")
    assert "mini-agent make-exercises --force" in text and "DISCARDS your edits" in text
    out = io.StringIO()
    assert cli.main(["make-exercises", "--check"], out=out) == 1
    assert out.getvalue() == "out of date: exercises/42_demo.py\n"
    out = io.StringIO()
    assert cli.main(["make-exercises", "--force"], out=out) == 0
    assert out.getvalue() == "wrote exercises/42_demo.py\n"
    assert not exercise.read_text().endswith("# my work\n")
    out = io.StringIO()
    assert cli.main(["make-exercises"], out=out) == 0
    assert out.getvalue() == "exercises/ is in sync with solutions/\n"


def _actions(parser):
    import argparse
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from ((f"{name} {a.dest}", a) for a in sub._actions)
        else:
            yield action.dest, action


def test_help_is_plain_text_and_every_option_is_explained(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    text = capsys.readouterr().out
    assert "`" not in text and "The mini-agent command:" in text
    unexplained = [dest for dest, action in _actions(cli.build_parser())
                   if not action.help or "`" in action.help]
    assert unexplained == []


def test_sessions_dir_works_before_and_after_the_subcommand(tmp_path, capsys):
    cli.main(["--sessions-dir", str(tmp_path), "--workspace", str(tmp_path)], out=io.StringIO(),
             read=lines_from("Hello"))
    session_id = next(tmp_path.glob("*.jsonl")).stem
    capsys.readouterr()
    for argv in (["--sessions-dir", str(tmp_path), "sessions"],
                 ["sessions", "--sessions-dir", str(tmp_path)]):
        assert cli.main(argv) == 0
        assert session_id in capsys.readouterr().out
    assert cli.build_parser().parse_args(["sessions"]).sessions_dir == cli.SESSIONS_DIR


def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(tmp_path):
    path = tmp_path / "long.jsonl"
    path.write_text(sample_session_jsonl(400), encoding="utf-8")
    child = subprocess.Popen(        # --json: ~400 rows of ~300 bytes, beyond a 64 KiB pipe
        [sys.executable, "-c", "import sys; from mini_agent.cli import main; "
         f"sys.exit(main(['analyze', '--json', {str(path)!r}]))"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    assert child.stdout.readline().decode().strip() == "{"
    child.stdout.close()                                            # `| head -1`
    _, err = child.communicate(timeout=120)
    assert child.returncode == 141
    assert b"Traceback" not in err and b"BrokenPipeError" not in err


def test_analyze_says_when_there_is_nothing_to_mask(tmp_path, capsys):
    from mini_agent.harness.analyze import NO_TOOL_RESULTS_NOTE, main_analyze
    path = tmp_path / "plain.json"     # tool output in user text, as older trajectories do
    path.write_text(json.dumps([
        {"role": "system", "content": "You are an autonomous programmer."},
        {"role": "user", "content": "fix the bug"},
        {"role": "assistant", "content": "I will run the tests"},
        {"role": "user", "content": "OBSERVATION: 3 passed, 1 failed"},
        {"role": "assistant", "content": "done"}]), encoding="utf-8")
    assert main_analyze(path) == 0
    assert NO_TOOL_RESULTS_NOTE in capsys.readouterr().out


def test_the_commands_that_run_no_agent_start_without_the_sdk(tmp_path):
    # `grade` and `evaluate` are run again and again in a classroom: importing the command
    # line (and running `grade`) must not pay the anthropic SDK's import (seconds of CPU)
    code = ("import sys\nfrom mini_agent import cli\nassert 'anthropic' not in sys.modules\n"
            "code = cli.main(['grade', '03', '--root', sys.argv[1]])\n"
            "print(code, 'anthropic' in sys.modules)\n")
    (tmp_path / "exercises").mkdir()
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "2 False"  # no 03 file: exit 2, no SDK


@pytest.mark.parametrize("status, kind, fix", [
    (400, "invalid_request_error", "the real API refuses such a request too"),
    (529, "overloaded_error", "try again")])
def test_an_offline_api_error_names_the_offline_api_and_gives_no_key_advice(status, kind, fix):
    import anthropic
    import httpx2

    from mini_agent.console import api_error_line
    from mini_agent.offline.transport import OFFLINE_HOST
    request = httpx2.Request("POST", f"http://{OFFLINE_HOST}/v1/messages")
    body = {"type": "error", "error": {"type": kind, "message": "no"}}
    error = anthropic.APIStatusError("no", response=httpx2.Response(status, request=request,
                                                                    json=body), body=body)
    assert api_error_line(error) == f"mini-agent: the offline API answered {status} {kind}: no; {fix}"
    online = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    error = anthropic.APIStatusError("no", response=httpx2.Response(status, request=online,
                                                                    json=body), body=body)
    assert api_error_line(error).endswith("or unset ANTHROPIC_API_KEY to run offline")
