"""Tests for mini_agent.core.continuation: auto_continue through max_tokens (seed 000)."""

import asyncio

import pytest

from mini_agent.core.continuation import (CONTINUE_PROMPT, MAX_CONTINUE_ATTEMPTS, async_auto_continue,
                                          auto_continue, continuation_messages, merge_pieces,
                                          next_step)
from mini_agent.core.messages import validate_messages
from mini_agent.offline import FaultPlan, ScriptedBrain, offline_async_client, offline_client

T = lambda s: {"type": "text", "text": s}  # noqa: E731


def text_reply(s, stop_reason="end_turn"):
    return {"content": [T(s)], "stop_reason": stop_reason}


def test_merge_pieces_joins_adjacent_text_and_drops_empty_text():
    use = {"type": "tool_use", "id": "t1", "name": "x", "input": {}}
    pieces = [[T("Hel")], [T(""), T("lo "), use], [T("world")]]
    before = [list(p) for p in pieces]
    assert merge_pieces(pieces) == [T("Hello "), use, T("world")]
    assert pieces == before  # input not mutated


def test_continuation_messages_strip_trailing_whitespace_and_refuse_empty():
    history = [{"role": "user", "content": "plan"}]
    out = continuation_messages(history, "Step one:  \n")
    assert out == [history[0], {"role": "assistant", "content": [T("Step one:")]},
                   {"role": "user", "content": CONTINUE_PROMPT}]
    assert len(history) == 1
    validate_messages(out)
    with pytest.raises(ValueError, match="no text"):
        continuation_messages(history, "  \n")


@pytest.mark.parametrize("kwargs, expected", [
    (dict(stop_reason="end_turn", text_so_far="", has_complete_tool_use=False, attempt=1), "done"),
    (dict(stop_reason="max_tokens", text_so_far="a", has_complete_tool_use=True, attempt=1),
     "done"),
    (dict(stop_reason="max_tokens", text_so_far="a", has_complete_tool_use=False, attempt=1),
     "continue"),
    (dict(stop_reason="max_tokens", text_so_far=" ", has_complete_tool_use=False, attempt=2),
     "retry_larger"),
    (dict(stop_reason="max_tokens", text_so_far="a", has_complete_tool_use=False, attempt=3),
     "give_up"),
])
def test_next_step(kwargs, expected):
    assert next_step(**kwargs) == expected


def request(**extra):
    return dict(model="claude-sonnet-4-6", max_tokens=500,
                messages=[{"role": "user", "content": "Write the plan."}], **extra)


def test_auto_continue_merges_a_cut_text_reply():
    brain = ScriptedBrain([text_reply("The plan has two steps: first read the"),
                           text_reply(" code, then fix it.")])
    client = offline_client(brain, faults=FaultPlan(max_tokens_at={1: "text"}))
    result = auto_continue(client, **request())
    assert result["attempts"] == 2 and result["stop_reason"] == "end_turn"
    assert len(result["content"]) == 1
    assert result["content"][0]["text"].endswith(" code, then fix it.")
    sent = client.offline_transport.requests[1]["messages"]
    assert sent[-1] == {"role": "user", "content": CONTINUE_PROMPT}
    assert sent[-2]["content"][0]["text"] == sent[-2]["content"][0]["text"].rstrip()
    assert result["usage"]["output_tokens"] >= 2


def test_three_cuts_give_a_synthetic_end_turn():
    brain = ScriptedBrain([text_reply(f"piece {i} " * 20) for i in range(5)])
    client = offline_client(brain, faults=FaultPlan(max_tokens_at={1: "text", 2: "text",
                                                                   3: "text"}))
    result = auto_continue(client, **request())
    assert result["attempts"] == MAX_CONTINUE_ATTEMPTS
    assert result["stop_reason"] == "end_turn"  # the documented lie
    assert client.offline_transport.request_count == 3
    assert [b["type"] for b in result["content"]] == ["text"]


def test_cut_tool_use_is_dropped_and_never_sent_back():
    edit = {"type": "tool_use", "id": "toolu_1", "name": "edit_file",
            "input": {"path": "a.py", "new": "x" * 50}}
    brain = ScriptedBrain([{"content": [T("Editing."), edit], "stop_reason": "tool_use"},
                           {"content": [T(" Done editing.")], "stop_reason": "end_turn"}])
    client = offline_client(brain, faults=FaultPlan(max_tokens_at={1: "tool_use"}))
    result = auto_continue(client, **request(tools=[{"name": "edit_file", "description": "e",
                                                     "input_schema": {"type": "object"}}]))
    assert result["dropped_tool_use_ids"] == ["toolu_1"]
    assert result["content"] == [T("Editing. Done editing.")]
    for body in client.offline_transport.requests:
        assert "toolu_1" not in str(body["messages"])


def test_only_a_cut_tool_use_retries_with_a_larger_max_tokens():
    read = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}}
    brain = ScriptedBrain([{"content": [read], "stop_reason": "tool_use"}])
    tools = [{"name": "read_file", "description": "r", "input_schema": {"type": "object"}}]
    client = offline_client(brain, faults=FaultPlan(max_tokens_at={1: "tool_use"}))
    result = auto_continue(client, **request(tools=tools))
    assert [b["max_tokens"] for b in client.offline_transport.requests] == [500, 1000]
    assert client.offline_transport.requests[1]["messages"] == request()["messages"]
    # the API names the model as the call's caller
    assert result["content"] == [{**read, "caller": {"type": "direct"}}]
    assert result["stop_reason"] == "tool_use"


def test_async_auto_continue_gives_the_same_result():
    def make(factory):
        brain = ScriptedBrain([text_reply("Alpha beta gamma delta"), text_reply(" epsilon.")])
        return factory(brain, faults=FaultPlan(max_tokens_at={1: "text"}))
    sync = auto_continue(make(offline_client), **request())
    asynchronous = asyncio.run(async_auto_continue(make(offline_async_client), **request()))
    assert sync == asynchronous


def test_uncut_reply_is_returned_as_is_in_one_request():
    client = offline_client(ScriptedBrain([text_reply("Short.")]))
    result = auto_continue(client, **request())
    assert result["content"] == [T("Short.")] and result["attempts"] == 1
    assert client.offline_transport.request_count == 1


# --------------------------------------------------------------------------- whitespace pieces

def test_whitespace_only_pieces_are_dropped_but_whitespace_inside_text_is_kept():
    use = {"type": "tool_use", "id": "t1", "name": "x", "input": {}}
    assert merge_pieces([[T("\n\n")]]) == []
    assert merge_pieces([[T("\n"), use], [T(" \t")]]) == [use]
    assert merge_pieces([[T("a")], [T("\n\n")], [T("b")]]) == [T("a\n\nb")]
    assert merge_pieces([[use, T("\u3000")], [T("ok")]]) == [use, T("\u3000ok")]


class WhitespaceClient:
    """A sync client stand-in whose every reply is whitespace cut by max_tokens."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.requests = []
        self.messages = self

    def create(self, **request):
        self.requests.append(request)
        return {"content": self.replies.pop(0), "stop_reason": "max_tokens",
                "usage": {"input_tokens": 1, "output_tokens": 1}}


def test_auto_continue_never_returns_a_whitespace_only_turn():
    client = WhitespaceClient([[T("\n\n")], [T(" ")], [T("\n")]])
    result = auto_continue(client, **request())
    assert (result["content"], result["stop_reason"], result["attempts"]) == ([], "end_turn", 3)
    client = WhitespaceClient([[T("Step one.")], [T("\n")], [T("\n\n")]])
    result = auto_continue(client, **request())
    assert result["content"] == [T("Step one.\n\n\n")]
    for sent in client.requests[1:]:  # the prefill sent back never ends in whitespace
        validate_messages(sent["messages"])
