"""The REPL survives Ctrl-C during a run, and the transcript shows a broken stream's retry.

Ctrl-C is a real SIGINT sent while a tool runs (it lands in the main thread's ``run()``, as a
keypress would); the Agent settles its tools and logs every answer, the REPL prints one line
and reads the next prompt; Ctrl-C at the prompt still exits.
"""

import io
import os
import signal
import threading
import time

import pytest

import mini_agent
from mini_agent import Agent, offline_async_client
from mini_agent.console import event_printer, repl, stream_retry_line
from mini_agent.core.messages import tool_uses, validate_messages
from mini_agent.harness.executor import INTERRUPTED_TEXT
from mini_agent.harness.loop_events import StreamRetry
from mini_agent.harness.model import StreamFaultError
from mini_agent.harness.session import SessionWriter
from mini_agent.harness.tools import Tool
from mini_agent.offline import FaultPlan, ScriptedBrain


def use(i, name):
    return {"type": "tool_use", "id": f"toolu_{i:02d}", "name": name, "input": {}}


REPLY = {"content": [{"type": "text", "text": "Three calls."}, use(1, "slow_read"),
                     use(2, "write"), use(3, "read")], "stop_reason": "tool_use"}


def tools(effects, history):
    """A slow read that presses Ctrl-C while it runs, then a write and a read queued behind.

    The key is pressed once the whole reply is stored in ``history`` (the agent's), so the
    queued calls are in it: pressed earlier, mid-stream, they would never be asked for.
    """
    def press_ctrl_c():
        while not any(len(tool_uses(m)) == 3 for m in history):
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)    # lands in the main thread's run()

    def slow(_input):
        effects.append("slow_read started")
        threading.Thread(target=press_ctrl_c).start()
        time.sleep(0.4)
        effects.append("slow_read ended")
        return "slow read done"

    def mark(name):
        def run(_input):
            effects.append(f"{name} ran")
            return f"{name} done"
        return run
    return {"slow_read": Tool("slow_read", "slow", {"type": "object"}, "read-only", slow),
            "write": Tool("write", "write", {"type": "object"}, "write", mark("write")),
            "read": Tool("read", "read", {"type": "object"}, "read-only", mark("read"))}


def prompts(*answers, then=EOFError):
    """A ``read`` that returns the answers in turn, then raises ``then`` (Ctrl-C or EOF)."""
    it = iter(answers)
    asked = []

    def read(prompt):
        asked.append(prompt)
        try:
            return next(it)
        except StopIteration:
            raise then
    read.asked = asked
    return read


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def test_ctrl_c_during_a_run_returns_to_the_prompt_and_a_second_one_exits(tmp_path):
    effects = []
    agent = Agent(offline_async_client(ScriptedBrain([REPLY, "Done."])),
                  session=SessionWriter(tmp_path / "sessions", "s1"))
    agent.tools = tools(effects, agent.history)
    out = io.StringIO()
    read = prompts("Do three things.", "/stats", then=KeyboardInterrupt)
    assert repl(agent, out=out, read=read) == 0
    lines = out.getvalue().splitlines()
    assert "interrupted: 2 tool calls answered as interrupted; the session is saved" in lines, lines
    at = lines.index("interrupted: 2 tool calls answered as interrupted; the session is saved")
    assert lines[at + 1].startswith("turns: ")      # /stats ran at the prompt after it
    assert len(read.asked) == 3                     # the third prompt's Ctrl-C exited
    assert effects == ["slow_read started", "slow_read ended"]   # queued tools never ran
    validate_messages(agent.history)
    answers = agent.history[-1]["content"]
    assert [b["content"] for b in answers] == ["slow read done", INTERRUPTED_TEXT,
                                               INTERRUPTED_TEXT]


def test_the_interrupted_line_without_a_session(monkeypatch):
    class Stopped:
        session = None
        history = [{"role": "user", "content": "earlier"}]

        def run(self, text, on_event=None):
            self.history = [*self.history, {"role": "assistant", "content": [use(1, "read")]},
                            {"role": "user", "content": [{
                                "type": "tool_result", "tool_use_id": "toolu_01",
                                "content": INTERRUPTED_TEXT, "is_error": True}]}]
            raise KeyboardInterrupt
    out = io.StringIO()
    assert repl(Stopped(), out=out, read=prompts("go")) == 0
    assert "interrupted: 1 tool call answered as interrupted; the history is kept\n" in (
        out.getvalue())


def test_a_stream_retry_prints_one_line():
    out = io.StringIO()
    show = event_printer(out)
    show(StreamRetry(2, 1, "connection", "peer closed\nconnection", ("toolu_a", "toolu_b"), True))
    show(StreamRetry(2, 3, "overloaded_error", "Overloaded", (), False))
    assert out.getvalue().splitlines() == [
        "[stream broke] turn 2, attempt 1: connection (peer closed connection); keeping 2 "
        "complete tool calls and going on",
        "[stream broke] turn 2, attempt 3: overloaded_error (Overloaded); no retry left, the "
        "run stops"]
    assert stream_retry_line(StreamRetry(1, 1, "api_error", "x", (), True)).endswith(
        "sending the request again")


def test_the_repl_shows_a_stream_break_and_goes_on():
    agent = Agent(offline_async_client(ScriptedBrain(["Hello there."]),
                                       faults=FaultPlan(stream_drop_at={1})), tools={})
    out = io.StringIO()
    assert repl(agent, out=out, read=prompts("hi")) == 0
    text = out.getvalue()
    assert "[stream broke] turn 1, attempt 1: connection" in text
    assert text.count("[stream broke]") == 1 and "sending the request again" in text
    assert "Hello there." in text and "[completed after 2 model requests]" in text


def test_stream_names_are_public():
    assert mini_agent.StreamFaultError is StreamFaultError
    assert mini_agent.StreamRetry is StreamRetry
    assert {"StreamFaultError", "StreamRetry"} <= set(mini_agent.__all__)
