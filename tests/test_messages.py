"""validate_messages: every API rule the kit can break, with the index and id in the error."""

import copy

import pytest
from hypothesis import given, settings

from mini_agent.core.messages import (MessageValidationError,
                                      tool_result_block, tool_result_text, validate_messages)
from strategies import histories

USE = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}


def hist(*middle):
    return [{"role": "user", "content": "go"}, *middle]


def rule_of(messages, **kw):
    with pytest.raises(MessageValidationError) as info:
        validate_messages(messages, **kw)
    return info.value


def test_valid_pairing_passes():
    validate_messages(hist({"role": "assistant", "content": [USE]},
                           {"role": "user", "content": [RESULT]}))


def test_tool_use_without_result_names_index_and_id():
    err = rule_of(hist({"role": "assistant", "content": [USE]},
                       {"role": "user", "content": "no results"}))
    assert (err.rule, err.index, err.tool_use_id) == ("tool_use_without_result", 1, "toolu_1")
    assert "toolu_1" in str(err) and "messages.1" in str(err)


def test_trailing_tool_use_is_unanswered():
    err = rule_of(hist({"role": "assistant", "content": [USE]}))
    assert err.rule == "tool_use_without_result"


def test_orphan_tool_result():
    err = rule_of(hist({"role": "assistant", "content": "hi"},
                       {"role": "user", "content": [RESULT]}))
    assert (err.rule, err.index, err.tool_use_id) == ("tool_result_without_use", 2, "toolu_1")


def test_result_must_be_in_the_immediately_following_message():
    err = rule_of(hist({"role": "assistant", "content": [USE]},
                       {"role": "user", "content": [RESULT]},
                       {"role": "assistant", "content": "ok"},
                       {"role": "user", "content": [RESULT]}))
    assert err.rule in ("tool_result_without_use", "duplicate_id")


def test_empty_and_whitespace_text():
    assert rule_of(hist({"role": "assistant", "content": [{"type": "text", "text": ""}]})
                   ).rule == "empty_text"
    assert rule_of(hist({"role": "assistant", "content": [{"type": "text", "text": " \n"}]})
                   ).rule == "empty_text"
    assert rule_of([{"role": "user", "content": ""}]).rule == "empty_text"
    nested = dict(RESULT, content=[{"type": "text", "text": ""}])
    assert rule_of(hist({"role": "assistant", "content": [USE]},
                        {"role": "user", "content": [nested]})).rule == "empty_text"


def test_final_assistant_prefill_may_be_empty_string():
    validate_messages(hist({"role": "assistant", "content": ""}))


def test_roles_alternate_and_start_with_user():
    assert rule_of([{"role": "assistant", "content": "x"}]).rule == "first_role"
    assert rule_of([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
                   ).rule == "alternation"
    assert rule_of([]).rule == "empty_messages"


def test_kit_private_keys_are_refused():
    leaked = dict(RESULT, timestamp=123.0)
    err = rule_of(hist({"role": "assistant", "content": [USE]},
                       {"role": "user", "content": [leaked]}))
    assert err.rule == "extra_keys" and "timestamp" in str(err)
    assert rule_of([{"role": "user", "content": "x", "meta": {}}]).rule == "extra_keys"


def test_tool_results_come_first():
    err = rule_of(hist({"role": "assistant", "content": [USE]},
                       {"role": "user", "content": [{"type": "text", "text": "note"}, RESULT]}))
    assert err.rule == "tool_result_order"


def test_at_most_four_cache_control_markers():
    cc = {"type": "ephemeral"}
    msgs = [{"role": "user", "content": [{"type": "text", "text": f"t{i}", "cache_control": cc}
                                         for i in range(3)]}]
    validate_messages(msgs, system=[{"type": "text", "text": "s", "cache_control": cc}])
    err = rule_of(msgs, system=[{"type": "text", "text": "s", "cache_control": cc}],
                  tools=[{"name": "t", "input_schema": {}, "cache_control": cc}])
    assert err.rule == "cache_control_limit" and "Found 5" in str(err)


def test_duplicate_tool_use_ids():
    err = rule_of(hist({"role": "assistant", "content": [USE, USE]},
                       {"role": "user", "content": [RESULT]}))
    assert err.rule == "duplicate_id"


def test_helpers():
    assert tool_result_block("t", "x", is_error=True) == {
        "type": "tool_result", "tool_use_id": "t", "content": "x", "is_error": True}
    assert tool_result_text({"type": "tool_result", "tool_use_id": "t", "content": [
        {"type": "text", "text": "a"}, {"type": "image", "source": {}},
        {"type": "text", "text": "b"}]}) == "ab"


@settings(max_examples=80, deadline=None)
@given(histories())
def test_generated_histories_are_valid_and_not_mutated(history):
    before = copy.deepcopy(history)
    validate_messages(history)
    assert history == before


@settings(max_examples=60, deadline=None)
@given(histories(min_turns=1))
def test_dropping_any_tool_result_is_caught(history):
    # remove the first tool_result found: the history must become invalid
    for i, m in enumerate(history):
        if isinstance(m["content"], list):
            kept = [b for b in m["content"] if b.get("type") != "tool_result"]
            if len(kept) < len(m["content"]):
                broken = copy.deepcopy(history)
                first = next(j for j, b in enumerate(m["content"]) if b["type"] == "tool_result")
                del broken[i]["content"][first]
                if not broken[i]["content"]:
                    broken[i]["content"] = "x"
                with pytest.raises(MessageValidationError):
                    validate_messages(broken)
                return


def test_unknown_block_type_is_refused():
    err = rule_of([{"role": "user", "content": [{"type": "bogus", "text": "x"}]}])
    assert err.rule == "unknown_block_type" and "bogus" in str(err)


def test_a_final_assistant_turn_ending_in_whitespace_is_refused_in_a_request_only():
    history = [{"role": "user", "content": "hi"},
               {"role": "assistant", "content": [{"type": "text", "text": "Sure.\n"}]}]
    with pytest.raises(MessageValidationError,
                       match="^final assistant content cannot end with trailing whitespace$"):
        validate_messages(history)
    validate_messages(history, request=False)  # a stored history: a user turn comes next
    validate_messages(history + [{"role": "user", "content": "go on"}])
    validate_messages([history[0], {"role": "assistant", "content": "Sure."}])


@pytest.mark.parametrize("content", [5, {"a": 1}, [{"type": "bogus"}], [{"type": "tool_use"}],
                                     ["text"]])
def test_tool_result_content_of_the_wrong_type_is_refused(content):
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "t1", "name": "x", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                              "content": content}]}]
    with pytest.raises(MessageValidationError) as info:
        validate_messages(messages)
    assert info.value.rule == "tool_result_content"


@pytest.mark.parametrize("where", ["system", "tools"])
def test_a_bad_cache_control_on_system_or_tools_is_refused_before_sending(where):
    bad = {"type": "ephemeral", "ttl": "2h"}
    extra = ({"system": [{"type": "text", "text": "s", "cache_control": bad}]}
             if where == "system" else
             {"tools": [{"name": "t", "input_schema": {"type": "object"}, "cache_control": bad}]})
    with pytest.raises(MessageValidationError) as info:
        validate_messages([{"role": "user", "content": "hi"}], **extra)
    assert info.value.rule == "cache_control"
    assert str(info.value).startswith(f"{where}.0: cache_control must be")
    good = {"type": "ephemeral", "ttl": "1h"}
    fine = ({"system": [{"type": "text", "text": "s", "cache_control": good}]}
            if where == "system" else
            {"tools": [{"name": "t", "input_schema": {"type": "object"}, "cache_control": good}]})
    validate_messages([{"role": "user", "content": "hi"}], **fine)


@pytest.mark.parametrize("ttl", [["1h"], {"1h": 1}, 5])
@pytest.mark.parametrize("where", ["message", "system", "tools"])
def test_a_cache_control_ttl_that_is_not_a_string_is_a_validation_error(ttl, where):
    marker = {"type": "ephemeral", "ttl": ttl}
    block = {"type": "text", "text": "x", "cache_control": marker}
    messages = [{"role": "user", "content": [block] if where == "message" else "hi"}]
    kw = {"system": [block]} if where == "system" else \
        {"tools": [{"name": "t", "input_schema": {}, "cache_control": marker}]} \
        if where == "tools" else {}
    assert rule_of(messages, **kw).rule == "cache_control"
