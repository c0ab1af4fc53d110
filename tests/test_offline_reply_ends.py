"""The offline API ends a reply where the request says, as the API does.

With ``stop_sequences`` the reply stops before the first sequence its text generates,
``stop_reason`` is ``"stop_sequence"``, ``stop_sequence`` names the match (JSON and SSE alike),
later blocks are never generated and ``output_tokens`` counts only what was. With
``tool_choice.disable_parallel_tool_use`` the reply holds at most one tool call, with
``tool_choice: none`` none.
"""

import pytest

from mini_agent.core.tokens import approx_tokens
from mini_agent.offline import offline_client
from mini_agent.offline.brains import ScriptedBrain
from mini_agent.offline.max_tokens import apply_stop_sequences

SONNET = "claude-sonnet-5-5"
ASK = [{"role": "user", "content": "List the files."}]
TOOL = {"name": "read_file", "input_schema": {"type": "object"}}
REPLY = {"content": [
    {"type": "text", "text": "<files>a.py b.py</files> and then more prose"},
    {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}}],
    "stop_reason": "tool_use"}


def ask(stream, **kwargs):
    client = offline_client(ScriptedBrain([REPLY]))
    params = {"model": SONNET, "max_tokens": 500, "messages": ASK, "tools": [TOOL], **kwargs}
    if not stream:
        return client.messages.create(**params)
    with client.messages.stream(**params) as events:
        return events.get_final_message()


@pytest.mark.parametrize("stream", [False, True])
def test_the_reply_ends_before_the_first_stop_sequence(stream):
    reply = ask(stream, stop_sequences=["</files>", "then"])
    assert reply.stop_reason == "stop_sequence"
    assert reply.stop_sequence == "</files>"
    assert [b.type for b in reply.content] == ["text"]          # the tool call never came
    assert reply.content[0].text == "<files>a.py b.py"
    assert reply.usage.output_tokens == approx_tokens("<files>a.py b.py")


@pytest.mark.parametrize("stream", [False, True])
def test_no_match_leaves_the_reply_whole(stream):
    reply = ask(stream, stop_sequences=["</dirs>"])
    assert (reply.stop_reason, reply.stop_sequence) == ("tool_use", None)
    assert [b.type for b in reply.content] == ["text", "tool_use"]


def test_max_tokens_still_wins_when_it_comes_first():
    reply = ask(False, stop_sequences=["then"], max_tokens=2)
    assert (reply.stop_reason, reply.stop_sequence) == ("max_tokens", None)
    assert reply.content[0].text == "<files>a"        # 2 tokens: 8 characters


def test_the_earliest_sequence_wins_and_empty_text_is_left_out():
    content = [{"type": "text", "text": "xyz"}]
    assert apply_stop_sequences(content, ["z", "y", "yz"]) == ([{"type": "text", "text": "x"}],
                                                              "yz")
    assert apply_stop_sequences(content, ["x"]) == ([], "x")
    assert apply_stop_sequences(content, [""]) == (content, None)
    thought = [{"type": "thinking", "thinking": "x", "signature": "s"}] + content
    assert apply_stop_sequences(thought, ["x"]) == ([thought[0]], "x")


TWO_CALLS = {"content": [
    {"type": "text", "text": "Reading both."},
    {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
    {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"path": "b.py"}}],
    "stop_reason": "tool_use"}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("choice, calls", [
    ({"type": "auto", "disable_parallel_tool_use": True}, ["toolu_1"]),
    ({"type": "auto", "disable_parallel_tool_use": False}, ["toolu_1", "toolu_2"]),
    ({"type": "auto"}, ["toolu_1", "toolu_2"]),
])
def test_disabling_parallel_tool_use_leaves_one_call(stream, choice, calls):
    client = offline_client(ScriptedBrain([TWO_CALLS]))
    params = {"model": SONNET, "max_tokens": 500, "messages": ASK, "tools": [TOOL],
              "tool_choice": choice}
    if stream:
        with client.messages.stream(**params) as events:
            reply = events.get_final_message()
    else:
        reply = client.messages.create(**params)
    assert [b.id for b in reply.content if b.type == "tool_use"] == calls
    assert reply.content[0].text == "Reading both."
    assert reply.stop_reason == "tool_use"
    # output_tokens counts only what was generated
    sent = [b.model_dump(exclude_none=True) for b in reply.content]
    for block in sent:
        block.pop("caller", None)
    assert reply.usage.output_tokens == approx_tokens({"role": "assistant", "content": sent})


@pytest.mark.parametrize("stream", [False, True])
def test_tool_choice_none_leaves_the_calls_out(stream):
    client = offline_client(ScriptedBrain([TWO_CALLS]))
    params = {"model": SONNET, "max_tokens": 500, "messages": ASK, "tools": [TOOL],
              "tool_choice": {"type": "none"}}
    if stream:
        with client.messages.stream(**params) as events:
            reply = events.get_final_message()
    else:
        reply = client.messages.create(**params)
    assert [b.type for b in reply.content] == ["text"]
    assert reply.stop_reason == "end_turn"
    assert reply.usage.output_tokens == approx_tokens("Reading both.")
