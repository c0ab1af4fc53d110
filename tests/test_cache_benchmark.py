"""The kit-generated long sessions of ``benchmarks/cache_policies.py``."""

import importlib.util
from pathlib import Path

import pytest

from mini_agent.core.cache_policies import request_points
from mini_agent.core.messages import validate_messages
from mini_agent.core.tokens import approx_tokens

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "cache_policies.py"
_SPEC = importlib.util.spec_from_file_location("cache_policies_benchmark", _PATH)
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)


def tool_share(history):
    results = sum(approx_tokens(b) for m in history if isinstance(m["content"], list)
                  for b in m["content"] if b.get("type") == "tool_result")
    return results / approx_tokens(history)


@pytest.mark.parametrize("requests, share", [(40, 0.65), (80, 0.80), (12, 0.5)])
def test_generated_session_has_the_asked_length_and_share(requests, share):
    history = bench.generated_session(requests, tool_share=share)
    validate_messages(history)
    assert len(request_points(history)) == requests
    assert tool_share(history) == pytest.approx(share, abs=0.01)


def test_generated_session_is_deterministic_and_keeps_results_verbatim():
    a = bench.generated_session(30, tool_share=0.65)
    assert a == bench.generated_session(30, tool_share=0.65)
    plain = bench.generated_session(30, tool_share=1.0)
    assert [m for m in a if m["role"] == "user"] == [m for m in plain if m["role"] == "user"]
    assert tool_share(plain) > 0.9


def test_generated_session_rejects_bad_arguments():
    with pytest.raises(ValueError):
        bench.generated_session(1, tool_share=0.5)
    with pytest.raises(ValueError):
        bench.generated_session(10, tool_share=0)


def test_no_rewrite_floor_is_below_caching_alone():
    history = bench.generated_session(30, tool_share=0.8)
    kwargs = {"model": "claude-sonnet-4-6", "system": "s", "tools": bench.tool_definitions(["x"])}
    plain = bench.replay_with_cache(history, **kwargs)
    naive = bench.replay_with_cache(history, policy=bench.POLICIES["naive mask, no cache"][0],
                                    caching=False, **kwargs)
    floor = bench.no_rewrite_floor_usd(plain, naive, "claude-sonnet-4-6")
    assert 0 < floor < sum(r["cost_usd"] for r in plain)
