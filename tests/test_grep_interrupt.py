"""grep never outlives the call or fails on its own input: an interrupt kills and reaps the
search process, and a pattern re cannot compile is named as invalid."""

import signal
import subprocess
import threading

import pytest

from mini_agent.harness import grep_tool
from mini_agent.harness.workspace import Workspace


def test_an_interrupt_while_the_search_runs_kills_and_reaps_the_child(tmp_path, monkeypatch):
    (tmp_path / "b.txt").write_text("a" * 40 + "b\n")  # (a+)+$ runs for hours here
    started = []

    class Recorded(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(grep_tool.subprocess, "Popen", Recorded)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # even under nohup
    main = threading.main_thread().ident  # a real SIGINT, as Ctrl-C sends: it ends the wait
    timer = threading.Timer(1.0, signal.pthread_kill, (main, signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            grep_tool.grep(Workspace(tmp_path), {"pattern": "(a+)+$", "timeout_seconds": 60})
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    [proc] = started
    assert proc.returncode is not None  # killed and waited for: no orphan, no zombie
    assert proc.returncode < 0


@pytest.mark.parametrize("pattern, why", [
    ("a{4294967296}", "the repetition number is too large"),
    ("(" * 5000 + "a" + ")" * 5000, "nested too deeply for Python's re"),
])
def test_a_pattern_re_cannot_compile_is_an_invalid_regular_expression(tmp_path, pattern, why):
    with pytest.raises(grep_tool.ToolError) as caught:
        grep_tool.grep(Workspace(tmp_path), {"pattern": pattern})
    message = str(caught.value)
    assert message.startswith("invalid regular expression ") and why in message
    assert len(message) < 400


@pytest.mark.parametrize("timeout", [86_400.5, 1e12, 2 ** 63])
def test_a_time_limit_past_a_day_is_refused_with_a_message(tmp_path, timeout):
    with pytest.raises(grep_tool.ToolError) as caught:
        grep_tool.grep(Workspace(tmp_path), {"pattern": "x", "timeout_seconds": timeout})
    assert str(caught.value) == (f"timeout_seconds must be at most 86,400 seconds (a day), "
                                 f"got {timeout!r}")


def test_a_time_limit_of_a_day_is_taken(tmp_path):
    (tmp_path / "a.txt").write_text("x\n")
    assert grep_tool.grep(Workspace(tmp_path), {"pattern": "x", "timeout_seconds": 86_400}) \
        == "a.txt:1:x"
