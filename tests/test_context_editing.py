"""Server-side clear_tool_uses_20250919, offline."""

import copy

import pytest
from hypothesis import given, settings, strategies as st

from mini_agent.core.messages import tool_names_by_id, validate_messages
from mini_agent.offline import ScriptedBrain, offline_client
from mini_agent.core.context_edits import (CLEARED_PLACEHOLDER, CONTEXT_MANAGEMENT_BETA,
                                           apply_clear_tool_uses, clear_tool_uses_edit,
                                           clear_tool_uses_transform)

TOOLS = [{"name": n, "description": n, "input_schema": {"type": "object"}}
         for n in ("read_file", "grep", "memory")]


def history(names, size_chars=4000):
    msgs = [{"role": "user", "content": "start"}]
    for k, name in enumerate(names):
        msgs.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{k}", "name": name, "input": {"arg": k}}]})
        msgs.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{k}", "content": "x" * size_chars}]})
    return msgs


def request(names, **kw):
    return {"model": "claude-sonnet-4-6", "max_tokens": 10, "tools": TOOLS,
            "messages": history(names, **kw)}


def cleared(req):
    return [b["tool_use_id"] for m in req["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"
            and b["content"] == CLEARED_PLACEHOLDER]


def test_keep_counts_newest_tool_uses():
    req = request(["read_file"] * 5)
    new, applied = apply_clear_tool_uses(req, clear_tool_uses_edit(trigger_input_tokens=0,
                                                                   keep=2))
    assert cleared(new) == ["t0", "t1", "t2"]
    assert applied == {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 3,
                       "cleared_input_tokens": 2975}  # (3 * 4000 - 3 * 33) / 4, rounded
    new, _ = apply_clear_tool_uses(req, clear_tool_uses_edit(trigger_input_tokens=0, keep=4))
    assert cleared(new) == ["t0"]
    assert cleared(req) == []  # input untouched


def test_default_keep_is_three_and_default_trigger_is_100k():
    req = request(["grep"] * 5)
    assert apply_clear_tool_uses(req, {"type": "clear_tool_uses_20250919"}) == (req, None)
    big = request(["grep"] * 5, size_chars=90_000)  # ~112K tokens > 100K
    new, applied = apply_clear_tool_uses(big, {"type": "clear_tool_uses_20250919"})
    assert cleared(new) == ["t0", "t1"]


def test_trigger_input_tokens_and_tool_uses():
    req = request(["grep"] * 5)  # about 5,000 tokens, 5 tool uses
    assert apply_clear_tool_uses(req, clear_tool_uses_edit(trigger_input_tokens=6000,
                                                           keep=1))[1] is None
    assert apply_clear_tool_uses(req, clear_tool_uses_edit(trigger_input_tokens=4000,
                                                           keep=1))[1] is not None
    assert apply_clear_tool_uses(req, clear_tool_uses_edit(trigger_tool_uses=5, keep=1))[1] \
        is None
    assert apply_clear_tool_uses(req, clear_tool_uses_edit(trigger_tool_uses=4, keep=1))[1] \
        is not None


def test_clear_at_least_blocks_small_edits():
    req = request(["grep"] * 4)  # keep=2 frees (8000 - 66) / 4 -> 1,984 tokens
    edit = clear_tool_uses_edit(trigger_input_tokens=0, keep=2, clear_at_least_tokens=1985)
    assert apply_clear_tool_uses(req, edit) == (req, None)
    edit = clear_tool_uses_edit(trigger_input_tokens=0, keep=2, clear_at_least_tokens=1984)
    assert apply_clear_tool_uses(req, edit)[1]["cleared_input_tokens"] == 1984


def test_exclude_tools_and_clear_tool_inputs():
    req = request(["memory", "read_file", "memory", "grep", "grep"])
    edit = clear_tool_uses_edit(trigger_input_tokens=0, keep=1, exclude_tools=["memory"],
                                clear_tool_inputs=True)
    new, applied = apply_clear_tool_uses(req, edit)
    assert cleared(new) == ["t1", "t3"]
    inputs = {b["id"]: b["input"] for m in new["messages"] if m["role"] == "assistant"
              for b in m["content"]}
    assert inputs == {"t0": {"arg": 0}, "t1": {}, "t2": {"arg": 2}, "t3": {}, "t4": {"arg": 4}}
    only_grep = clear_tool_uses_edit(trigger_input_tokens=0, keep=1, clear_tool_inputs=["grep"])
    new, _ = apply_clear_tool_uses(req, only_grep)
    inputs = {b["id"]: b["input"] for m in new["messages"] if m["role"] == "assistant"
              for b in m["content"]}
    assert inputs["t1"] == {"arg": 1} and inputs["t3"] == {}


def test_bad_edit_values():
    with pytest.raises(ValueError):
        clear_tool_uses_edit(trigger_input_tokens=1, trigger_tool_uses=1)
    with pytest.raises(ValueError):
        clear_tool_uses_edit(keep=-1)
    with pytest.raises(ValueError, match="trigger.type"):
        apply_clear_tool_uses(request(["grep"]), {"type": "clear_tool_uses_20250919",
                                                  "trigger": {"type": "turns", "value": 1}})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["read_file", "grep", "memory"]), max_size=10),
       st.integers(0, 5), st.integers(0, 3000), st.booleans())
def test_pairing_stays_valid_and_ids_unchanged(names, keep, least, clear_inputs):
    req = request(names, size_chars=400)
    before = copy.deepcopy(req)
    edit = clear_tool_uses_edit(trigger_input_tokens=0, keep=keep, clear_at_least_tokens=least,
                                exclude_tools=["memory"], clear_tool_inputs=clear_inputs)
    new, applied = apply_clear_tool_uses(req, edit)
    assert req == before
    validate_messages(new["messages"], tools=new["tools"])
    assert tool_names_by_id(new["messages"]) == tool_names_by_id(req["messages"])
    assert len(cleared(new)) <= max(0, len(names) - keep)
    if applied:
        assert applied["cleared_input_tokens"] >= least


def test_through_the_sdk_beta_api():
    client = offline_client(ScriptedBrain(["done"]),
                            request_transforms=[clear_tool_uses_transform])
    req = request(["grep"] * 4)
    response = client.beta.messages.create(
        **req, betas=[CONTEXT_MANAGEMENT_BETA],
        context_management={"edits": [clear_tool_uses_edit(trigger_input_tokens=0, keep=1)]})
    edit = response.context_management.applied_edits[0]
    assert (edit.type, edit.cleared_tool_uses) == ("clear_tool_uses_20250919", 3)
    seen = client.offline_transport.requests[-1]
    assert cleared(seen) == ["t0", "t1", "t2"]
    plain = client.messages.create(**req)
    assert client.offline_transport.requests[-1]["messages"] == req["messages"]
    assert plain.usage.input_tokens > response.usage.input_tokens
