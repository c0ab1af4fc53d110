"""Cache-aware masking (payback boundary) and resume breakpoints."""

from hypothesis import given, settings, strategies as st

from mini_agent.core.cache_policies import (PaybackMasking, ResumeBreakpoints, payback_boundary,
                                            replay_with_cache, request_points)
from mini_agent.core.masking import ChunkedMasking, is_masked
from mini_agent.core.messages import count_cache_control, validate_messages


def session(sizes):
    msgs = [{"role": "user", "content": "Fix the bug."}]
    for k, size in enumerate(sizes):
        msgs.append({"role": "assistant", "content": [
            {"type": "text", "text": f"step {k}"},
            {"type": "tool_use", "id": f"t{k}", "name": "read_file", "input": {"k": k}}]})
        msgs.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{k}", "content": "line\n" * size}]})
    msgs.append({"role": "assistant", "content": "Done."})
    return msgs


def test_request_points():
    assert request_points(session([1, 1])) == [1, 3, 5]


def test_payback_waits_until_masking_pays():
    small = session([50] * 6)          # little to free: never masks
    assert payback_boundary(small[:-1]) == 0
    big = session([4000] * 30)         # huge old results in a long session: masks
    assert payback_boundary(big[:-1], keep=4) > 0
    view = PaybackMasking(keep=4)(big[:-1])
    masked = [b for m in view if isinstance(m["content"], list) for b in m["content"]
              if b.get("type") == "tool_result" and is_masked(b)]
    assert len(masked) == payback_boundary(big[:-1], keep=4)
    validate_messages(view)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 3000), min_size=1, max_size=25))
def test_boundary_never_moves_back(sizes):
    msgs = session(sizes)
    bounds = [payback_boundary(msgs[:i]) for i in request_points(msgs)]
    assert bounds == sorted(bounds)
    assert all(b <= max(0, len(sizes) - 4) for b in bounds)


def test_resume_breakpoint_reads_up_to_the_old_boundary():
    msgs = session([800] * 40)
    policy = ChunkedMasking(keep=4, chunk=12, threshold_tokens=0)  # moves at 16, 28, 40 results
    kwargs = {"model": "claude-sonnet-4-6", "policy": policy, "system": "rules " * 2000}
    plain = replay_with_cache(msgs, **kwargs)
    resumed = replay_with_cache(msgs, resume=True, **kwargs)
    # request 29 moves the boundary from 12 to 24 results: the old anchor is > 20 blocks back
    assert plain[28]["usage"]["cache_read_input_tokens"] == 3000  # the system prompt only
    assert resumed[28]["usage"]["cache_read_input_tokens"] > 3000 + 12 * 10
    assert sum(r["cost_usd"] for r in resumed) < sum(r["cost_usd"] for r in plain)
    out = ResumeBreakpoints()({"model": "m", "tools": [{"name": "x"}], "system": "s",
                               "messages": policy(msgs[:-1])})
    assert count_cache_control([out["tools"], out["system"], out["messages"]]) <= 4


def test_resume_breakpoints_keep_longer_ttls_first_across_turns():
    from mini_agent.core.wire_rules import cache_markers
    planner = ResumeBreakpoints(ttl="1h")
    system = [{"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}}]
    history = [{"role": "user", "content": "start"}]
    for turn in range(6):
        history += [{"role": "assistant", "content": f"reply {turn}"},
                    {"role": "user", "content": f"next {turn}"}]
        out = planner({"model": "claude-sonnet-4-6", "max_tokens": 8, "system": system,
                       "messages": list(history)})
        ttls = [m.get("ttl", "5m") for m in cache_markers([out["system"], out["messages"]])]
        assert ttls == ["5m"] * len(ttls)
        validate_messages(out["messages"], system=out["system"])
