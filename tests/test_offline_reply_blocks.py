"""The offline API presents reply blocks as today's API does: tool callers, omitted thinking.

A ``tool_use`` block names its caller (``{"type": "direct"}``: the model itself) in the JSON
reply and in the stream's ``content_block_start``; with ``thinking.display: "omitted"`` a
thinking block comes back with empty text and its signature, still billed as output, and
the turn can be sent back as it came.
"""

import json

import pytest

from mini_agent.core.tokens import approx_tokens
from mini_agent.offline import offline_client
from mini_agent.offline.brains import ScriptedBrain
from mini_agent.offline.sse import sse_events

SONNET = "claude-sonnet-5-5"
ASK = [{"role": "user", "content": "What is in a.py?"}]
READ = {"name": "read_file", "input_schema": {"type": "object"}}
CALL = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}}
THOUGHT = {"type": "thinking", "thinking": "The user wants a.py; reading it first. " * 5,
           "signature": "sig-offline-1"}
REPLY = {"content": [THOUGHT, {"type": "text", "text": "Reading it."}, CALL],
         "stop_reason": "tool_use"}
ADAPTIVE = {"type": "adaptive"}


def create(stream=False, brain=REPLY, **kwargs):
    client = offline_client(ScriptedBrain([brain, "It defines main()."]))
    params = {"model": SONNET, "max_tokens": 2000, "messages": ASK, "tools": [READ], **kwargs}
    if not stream:
        return client, client.messages.create(**params)
    with client.messages.stream(**params) as events:
        return client, events.get_final_message()


@pytest.mark.parametrize("stream", [False, True])
def test_a_tool_call_names_the_model_as_its_caller(stream):
    _, reply = create(stream, brain={"content": [CALL], "stop_reason": "tool_use"})
    assert reply.content[0].caller is not None
    assert reply.content[0].caller.type == "direct"
    # the caller is metadata: not billed as output
    assert reply.usage.output_tokens == approx_tokens({"role": "assistant", "content": [CALL]})


def test_the_raw_json_and_the_stream_carry_the_caller():
    client = offline_client(ScriptedBrain([{"content": [CALL], "stop_reason": "tool_use"}]))
    raw = client.messages.with_raw_response.create(model=SONNET, max_tokens=500,
                                                   messages=ASK, tools=[READ])
    assert raw.http_response.json()["content"][0]["caller"] == {"type": "direct"}
    stream = client.messages.with_raw_response.create(model=SONNET, max_tokens=500,
                                                      messages=ASK, tools=[READ], stream=True)
    starts = [json.loads(line[6:]) for line in stream.http_response.read().decode().splitlines()
              if line.startswith("data: ") and "content_block_start" in line]
    assert starts[0]["content_block"] == {"type": "tool_use", "id": "toolu_1",
                                          "name": "read_file", "input": {},
                                          "caller": {"type": "direct"}}


@pytest.mark.parametrize("stream", [False, True])
def test_omitted_thinking_comes_back_empty_with_its_signature_and_is_billed(stream):
    _, shown = create(stream, thinking={**ADAPTIVE, "display": "summarized"})
    _, hidden = create(stream, thinking={**ADAPTIVE, "display": "omitted"})
    assert shown.content[0].thinking == THOUGHT["thinking"]
    assert hidden.content[0].type == "thinking"
    assert hidden.content[0].thinking == ""
    assert hidden.content[0].signature == "sig-offline-1"
    assert [b.type for b in hidden.content] == ["thinking", "text", "tool_use"]
    assert hidden.usage.output_tokens == shown.usage.output_tokens
    thinking = approx_tokens({"role": "assistant", "content": [THOUGHT]})
    assert hidden.usage.output_tokens_details.thinking_tokens == thinking > 0


def test_an_omitted_thinking_turn_can_be_sent_back():
    client, first = create(thinking={**ADAPTIVE, "display": "omitted"})
    history = ASK + [{"role": "assistant", "content": [b.model_dump(exclude_none=True)
                                                        for b in first.content]},
                     {"role": "user", "content": [{"type": "tool_result",
                                                   "tool_use_id": "toolu_1",
                                                   "content": "def main(): ..."}]}]
    second = client.messages.create(model=SONNET, max_tokens=2000, messages=history,
                                    tools=[READ], thinking={**ADAPTIVE, "display": "omitted"})
    assert second.content[-1].text == "It defines main()."


def test_a_brains_own_caller_is_kept():
    coded = {**CALL, "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_9"}}
    frames = list(sse_events({"id": "m", "type": "message", "role": "assistant", "model": "x",
                              "content": [coded], "stop_reason": "tool_use",
                              "usage": {"input_tokens": 1, "output_tokens": 1}}))
    assert b'"tool_id":"srvtoolu_9"' in b"".join(frames)
    _, reply = create(brain={"content": [coded], "stop_reason": "tool_use"})
    assert reply.content[0].caller.type == "code_execution_20250825"
    assert reply.content[0].caller.tool_id == "srvtoolu_9"
