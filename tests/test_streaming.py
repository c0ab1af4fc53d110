"""Tests for mini_agent.core.streaming: recorded SSE streams, cross-checked with the SDK accumulator."""

import json
from pathlib import Path

import anthropic
import httpx2
import pytest

from mini_agent.core.streaming import (StreamAssembler, StreamDone, TextDelta, ToolUseReady,
                                       ToolUseTruncated, assemble, assemble_tool_uses,
                                       message_chunks, parse_tool_input)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ALL_FIXTURES = ["parallel_tools.sse", "tool_use_cut_by_max_tokens.sse", "hand_escape_split.sse"]


def read_events(name: str) -> list[dict]:
    """Parse an SSE fixture into its event dicts (the ``data:`` lines)."""
    events = []
    for frame in (FIXTURES / name).read_text(encoding="utf-8").split("\n\n"):
        for line in frame.splitlines():
            if line.startswith("data: "):
                events.append(json.loads(line[len("data: "):]))
    return events


def sdk_final_message(name: str) -> anthropic.types.Message:
    """What the SDK's own stream accumulator makes of the same recorded bytes."""
    body = (FIXTURES / name).read_bytes()

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    client = anthropic.Anthropic(api_key="test", base_url="http://fixture.invalid",
                                 http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=100,
                                messages=[{"role": "user", "content": "hi"}]) as stream:
        return stream.get_final_message()


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_assembly_equals_the_sdk_accumulated_message(name):
    _, assembler = assemble(read_events(name))
    final = sdk_final_message(name)
    sdk_blocks = [b.to_dict() for b in final.content]
    if final.stop_reason == "max_tokens" and sdk_blocks[-1]["type"] == "tool_use":
        sdk_blocks = sdk_blocks[:-1]  # the SDK keeps the cut block (partial input); we drop it
    sdk_blocks = [{k: v for k, v in b.items() if v is not None} for b in sdk_blocks]
    assert assembler.content == sdk_blocks
    assert assembler.stop_reason == final.stop_reason
    assert assembler.usage["output_tokens"] == final.usage.output_tokens
    assert assembler.usage["input_tokens"] == final.usage.input_tokens


def test_sdk_event_objects_are_accepted_as_well_as_dicts():
    body = (FIXTURES / "parallel_tools.sse").read_bytes()
    client = anthropic.Anthropic(api_key="t", base_url="http://fixture.invalid", http_client=(
        httpx2.Client(transport=httpx2.MockTransport(lambda r: httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=body)))))
    raw = list(client.messages.create(model="claude-sonnet-5-5", max_tokens=10, stream=True,
                                      messages=[{"role": "user", "content": "hi"}]))
    from_objects, _ = assemble(raw)
    from_dicts, _ = assemble(read_events("parallel_tools.sse"))
    assert from_objects == from_dicts


def test_parallel_tools_come_out_complete_with_their_inputs():
    chunks, _ = assemble(read_events("parallel_tools.sse"))
    tools = [c.block for c in chunks if isinstance(c, ToolUseReady)]
    assert [t["id"] for t in tools] == ["toolu_01", "toolu_02", "toolu_03"]
    assert tools[0]["input"] == {"path": "invoicing/money.py",
                                 "note": "quote \" backslash \\ tab \t é ✓"}
    assert tools[1]["input"] == {}  # partial_json fragments were all empty: no arguments
    assert tools[2]["input"] == {"pattern": "round\\(", "path": ".", "flags": ["-n", "-r"]}
    text = "".join(c.text for c in chunks if isinstance(c, TextDelta))
    assert text.startswith("I will look at three things")
    assert isinstance(chunks[-1], StreamDone) and chunks[-1].stop_reason == "tool_use"


def test_each_tool_use_is_released_at_its_own_content_block_stop():
    """Tools must start while the model still streams: not at message_stop."""
    assembler = StreamAssembler()
    released_at = {}
    for n, event in enumerate(read_events("parallel_tools.sse")):
        for chunk in assembler.feed(event):
            if isinstance(chunk, ToolUseReady):
                released_at[chunk.block["id"]] = (n, event["type"])
    assert {kind for _, kind in released_at.values()} == {"content_block_stop"}
    assert released_at["toolu_01"][0] < released_at["toolu_02"][0] < released_at["toolu_03"][0]
    assert released_at["toolu_03"][0] < len(read_events("parallel_tools.sse")) - 2


def test_a_tool_with_no_fragments_waits_for_proof_it_was_not_cut():
    """No input_json_delta at all: complete once the next block starts or the stop_reason
    is not max_tokens (here: the last block, released by message_delta)."""
    assembler = StreamAssembler()
    released = {}
    for event in read_events("hand_escape_split.sse"):
        for chunk in assembler.feed(event):
            if isinstance(chunk, ToolUseReady):
                released[chunk.block["id"]] = event["type"]
    assert released == {"toolu_h1": "content_block_stop", "toolu_h2": "message_delta"}
    two = NO_ARG_TOOL + [{**NO_ARG_TOOL[0], "index": 1, "content_block": {
        "type": "tool_use", "id": "t2", "name": "grep", "input": {}}}]
    assembler = StreamAssembler()
    out = [(e["type"], c) for e in _stream(two, "max_tokens") for c in assembler.feed(e)]
    assert out[0] == ("content_block_start", ToolUseReady(
        {"type": "tool_use", "id": "t1", "name": "list_dir", "input": {}}))


def test_json_split_inside_escapes_and_empty_text_deltas():
    chunks, assembler = assemble(read_events("hand_escape_split.sse"))
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["Checking ", "both."]
    tools = [c.block for c in chunks if isinstance(c, ToolUseReady)]
    assert tools[0]["input"] == {"pattern": 'a"b\\cé', "path": "src"}
    assert tools[1] == {"type": "tool_use", "id": "toolu_h2", "name": "list_dir", "input": {}}
    assert assembler.usage == {"input_tokens": 50, "output_tokens": 37,
                               "cache_creation_input_tokens": 10, "cache_read_input_tokens": 30}


def test_fragments_cannot_be_parsed_one_by_one():
    """The typical wrong answer (json.loads per fragment) fails on these very fragments."""
    fragments = [e["delta"]["partial_json"] for e in read_events("hand_escape_split.sse")
                 if e["type"] == "content_block_delta"
                 and e["delta"]["type"] == "input_json_delta"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(fragments[0])
    assert parse_tool_input("".join(fragments))["path"] == "src"


def test_tool_use_cut_by_max_tokens_is_truncated_never_ready():
    chunks, assembler = assemble(read_events("tool_use_cut_by_max_tokens.sse"))
    assert not [c for c in chunks if isinstance(c, ToolUseReady)]
    cut = [c for c in chunks if isinstance(c, ToolUseTruncated)]
    assert cut == [ToolUseTruncated("toolu_09", "edit_file",
                                    '{"path": "invoicing/money.py", "old": "ROUND_HA')]
    assert assembler.content == [{"type": "text", "text": "Now I will fix the rounding."}]
    assert chunks[-1] == StreamDone("max_tokens", assembler.usage, "msg_fixture")


def _stream(blocks_events, stop_reason):
    events = [{"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 3}}}]
    events += blocks_events
    events += [{"type": "message_delta", "delta": {"stop_reason": stop_reason},
                "usage": {"output_tokens": 5}}, {"type": "message_stop"}]
    return events


NO_ARG_TOOL = [{"type": "content_block_start", "index": 0,
                "content_block": {"type": "tool_use", "id": "t1", "name": "list_dir",
                                  "input": {}}},
               {"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": ""}},
               {"type": "content_block_stop", "index": 0}]


def test_no_argument_tool_last_in_a_tool_use_reply_runs_with_empty_input():
    chunks, _ = assemble(_stream(NO_ARG_TOOL, "tool_use"))
    assert ToolUseReady({"type": "tool_use", "id": "t1", "name": "list_dir",
                         "input": {}}) in chunks


def test_empty_tool_input_cut_by_max_tokens_is_not_run():
    """``{}`` followed by max_tokens may be a cut before the first fragment: not executed."""
    chunks, _ = assemble(_stream(NO_ARG_TOOL, "max_tokens"))
    assert not [c for c in chunks if isinstance(c, ToolUseReady)]
    assert ToolUseTruncated("t1", "list_dir", "") in chunks


def test_stream_broken_off_inside_a_tool_use_reports_it_truncated():
    events = _stream(NO_ARG_TOOL[:1] + [{"type": "content_block_delta", "index": 0, "delta": {
        "type": "input_json_delta", "partial_json": '{"pa'}}], "max_tokens")[:-2]
    assembler = StreamAssembler()
    chunks = [c for e in events for c in assembler.feed(e)] + assembler.finish()
    assert chunks == [ToolUseTruncated("t1", "list_dir", '{"pa'), StreamDone(None, {
        "input_tokens": 3, "output_tokens": 0, "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0}, "m")]


def test_bad_event_order_raises_a_clear_error():
    with pytest.raises(ValueError, match="before message_start"):
        StreamAssembler().feed({"type": "content_block_stop", "index": 0})
    assembler = StreamAssembler()
    assembler.feed({"type": "message_start", "message": {"id": "m"}})
    with pytest.raises(ValueError, match="unknown block index 4"):
        assembler.feed({"type": "content_block_delta", "index": 4,
                        "delta": {"type": "text_delta", "text": "x"}})


def test_parse_tool_input():
    assert parse_tool_input([]) == parse_tool_input([""]) == {}
    assert parse_tool_input(['{"path": "設', '計.md"}']) == {"path": "設計.md"}
    assert parse_tool_input("") == {}
    assert parse_tool_input('{"a": [1, 2]}') == {"a": [1, 2]}
    with pytest.raises(ValueError):
        parse_tool_input("[1, 2]")
    with pytest.raises(ValueError):
        parse_tool_input('{"a": ')


def test_message_chunks_for_a_non_streamed_reply():
    message = {"id": "m1", "stop_reason": "max_tokens", "usage": {"input_tokens": 9},
               "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": ""},
                           {"type": "tool_use", "id": "a", "name": "x", "input": {"k": 1}},
                           {"type": "tool_use", "id": "b", "name": "y", "input": {"p": "ha"}}]}
    assert message_chunks(message) == [
        TextDelta("Hi"), ToolUseReady({"type": "tool_use", "id": "a", "name": "x",
                                       "input": {"k": 1}}),
        ToolUseTruncated("b", "y", '{"p": "ha"}'),
        StreamDone("max_tokens", {"input_tokens": 9, "output_tokens": 0,
                                  "cache_creation_input_tokens": 0,
                                  "cache_read_input_tokens": 0}, "m1")]


def test_assemble_tool_uses_is_the_ready_blocks_of_a_reply():
    """Exercise 01.2's function: the complete calls only, in the order they completed."""
    events = read_events("parallel_tools.sse")
    before = json.dumps(events)
    blocks = assemble_tool_uses(events)
    assert blocks == [c.block for c in assemble(events)[0] if isinstance(c, ToolUseReady)]
    assert len(blocks) >= 2 and [b["type"] for b in blocks] == ["tool_use"] * len(blocks)
    assert json.dumps(events) == before
    assert assemble_tool_uses(read_events("tool_use_cut_by_max_tokens.sse")) == []
    assert assemble_tool_uses(_stream(NO_ARG_TOOL, "max_tokens")) == []
    assert assemble_tool_uses(_stream(NO_ARG_TOOL, "tool_use")) == [
        {"type": "tool_use", "id": "t1", "name": "list_dir", "input": {}}]
    broken = _stream(NO_ARG_TOOL, "tool_use")[:-2]  # no message_delta: may be a cut
    assert assemble_tool_uses(broken) == []
