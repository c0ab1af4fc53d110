"""The same code path against the real API: opt-in, never run in CI.

Run with ``MINI_AGENT_ONLINE_TESTS=1 ANTHROPIC_API_KEY=... pytest tests/test_online.py``. Each
test sends a few small requests (well under a cent).
"""

import os

import pytest

from mini_agent.harness import config
from mini_agent.harness.agent import Agent
from mini_agent.core.masking import ThresholdMasking
from mini_agent.core.tokens import approx_request_tokens, count_tokens_exact

pytestmark = [
    pytest.mark.online,
    pytest.mark.skipif(os.environ.get("MINI_AGENT_ONLINE_TESTS") != "1" or not config.is_online(),
                       reason="online tests need MINI_AGENT_ONLINE_TESTS=1 and ANTHROPIC_API_KEY"),
]


def test_exact_count_is_near_the_estimate():
    import anthropic

    messages = [{"role": "user", "content": "Explain observation masking in one paragraph. " * 20}]
    exact = count_tokens_exact(anthropic.Anthropic(), model=config.model_name(), messages=messages)
    estimate = approx_request_tokens(messages=messages)
    assert 0.5 * exact <= estimate <= 2.0 * exact


def test_agent_runs_with_tools_on_the_demo_project(tmp_path):
    import anthropic

    from mini_agent.demo import copy_demo_workspace
    from mini_agent.harness.tools import build_tools

    workspace = copy_demo_workspace(tmp_path / "ws")
    agent = Agent(anthropic.AsyncAnthropic(), tools=build_tools(workspace),
                  view_policy=ThresholdMasking(), max_turns=4)
    agent.run("List the files at the top of the workspace with list_dir, then say how many there are.")
    assert any(r["usage"].get("input_tokens", 0) > 0 for r in agent.requests)
    names = [b.get("name") for m in agent.history if isinstance(m["content"], list)
             for b in m["content"] if b.get("type") == "tool_use"]
    assert "list_dir" in names
