"""Graded checks for exercise 01 (assemble streamed tool_use blocks); ``impl`` is the module.

The same checks run against the package (``from mini_agent import parse_tool_input,
assemble_tool_uses``). Typical mistakes caught: parsing one fragment alone (or only the last),
taking ``input`` from ``content_block_start``, stripping or re-decoding fragments (spaces and
Japanese text inside strings change), accepting a JSON value that is not an object, swallowing
a parse error, treating ``[""]`` as a cut, one fragment buffer shared by several tool_use
blocks, a block returned twice when a text or thinking block follows it, running a
``server_tool_use`` block, changing the events, running a call cut by ``max_tokens`` (or
dropping every argument-less call of such a reply, or keeping the last one), returning a block
that never got its ``content_block_stop``.

Source: exercise 01 (``solutions/01_streaming.py``) and its seed, section 1, pitfall 2 of
002_4516104fd432e704.txt (``input`` at ``content_block_start`` is ``{}``; the joined
``partial_json`` fragments are complete only at ``content_block_stop``).
"""

from __future__ import annotations

import json

from mini_agent.grading import check
from mini_agent.grading.checks._report import (
    called, expect, expect_raises, returns, snapshot, unchanged)


def tool_events(index, tool_id, name, fragments, *, stop=True, kind="tool_use"):
    """Build the stream events of one tool_use block.

    Args:
        index: the block's ``index`` in the reply.
        tool_id: its ``id`` ("toolu_1").
        name: the tool's name.
        fragments: the ``partial_json`` pieces, in order (cut anywhere, as the API cuts them).
        stop: end with ``content_block_stop`` (False: the stream broke off inside the block).
        kind: the block type, "tool_use" or "server_tool_use".

    Returns:
        ``content_block_start`` with ``input: {}``, one ``input_json_delta`` per fragment,
        then ``content_block_stop`` when ``stop``.
    """
    events = [{"type": "content_block_start", "index": index, "content_block": {
        "type": kind, "id": tool_id, "name": name, "input": {}}}]
    events += [{"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": f}} for f in fragments]
    return events + ([{"type": "content_block_stop", "index": index}] if stop else [])


def text_events(index, pieces):
    """Build the stream events of one text block.

    Args:
        index: the block's ``index`` in the reply.
        pieces: the ``text_delta`` texts, in order.

    Returns:
        ``content_block_start``, one ``text_delta`` per piece, ``content_block_stop``.
    """
    events = [{"type": "content_block_start", "index": index,
               "content_block": {"type": "text", "text": ""}}]
    events += [{"type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": p}} for p in pieces]
    return events + [{"type": "content_block_stop", "index": index}]


def thinking_events(index, text):
    """Build the stream events of one thinking block (one thinking delta, then its signature).

    Args:
        index: the block's ``index`` in the reply.
        text: the thinking text.

    Returns:
        ``content_block_start``, a ``thinking_delta``, a ``signature_delta``,
        ``content_block_stop``.
    """
    return [{"type": "content_block_start", "index": index,
             "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
            {"type": "content_block_delta", "index": index,
             "delta": {"type": "thinking_delta", "thinking": text}},
            {"type": "content_block_delta", "index": index,
             "delta": {"type": "signature_delta", "signature": "EqQBCkYIARgC"}},
            {"type": "content_block_stop", "index": index}]


def reply(blocks, stop_reason="tool_use", *, ended=True):
    """Wrap blocks' events into the events of one reply.

    Args:
        blocks: the event lists of each block (:func:`tool_events`, :func:`text_events`...).
        stop_reason: the ``message_delta``'s stop reason (default "tool_use").
        ended: False when the stream broke off: no ``message_delta`` nor ``message_stop``.

    Returns:
        ``message_start``, a ``ping``, the blocks' events, then ``message_delta`` and
        ``message_stop`` when ``ended``.
    """
    events = [{"type": "message_start", "message": {"id": "msg_1", "content": [],
                                                    "usage": {"input_tokens": 10}}},
              {"type": "ping"}]
    for b in blocks:
        events += b
    if not ended:
        return events
    return events + [{"type": "message_delta", "delta": {"stop_reason": stop_reason},
                      "usage": {"output_tokens": 20}}, {"type": "message_stop"}]


def split(text, *cuts):
    """Cut a text at the given positions.

    Args:
        text: the text, e.g. a tool input's JSON.
        cuts: increasing character positions.

    Returns:
        The pieces; joined they give ``text`` back.
    """
    pieces, last = [], 0
    for c in cuts:
        pieces.append(text[last:c])
        last = c
    return pieces + [text[last:]]


def tool(tool_id, name, tool_input):
    """Build the tool_use block the learner's function must return.

    Args:
        tool_id: the block's ``id``.
        name: the tool's name.
        tool_input: the parsed input.

    Returns:
        ``{"type": "tool_use", "id", "name", "input"}``.
    """
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def assembled(impl, events, what):
    """Call ``assemble_tool_uses(events)``, failing when the events were changed.

    Args:
        impl: the implementation under test.
        events: the stream events to pass.
        what: the input, described briefly for a failure message.

    Returns:
        What ``assemble_tool_uses`` returned.

    Raises:
        AssertionError: the call raised, or changed ``events``.
    """
    before = snapshot(events)
    got = called(lambda: impl.assemble_tool_uses(events), f"assemble_tool_uses({what})")
    unchanged(before, events, what=f"assemble_tool_uses({what})", names=("events",))
    return got


def ids(blocks):
    """List the ids of blocks, for a first short comparison.

    Args:
        blocks: tool_use dicts (anything else is listed as it is).

    Returns:
        Each dict's ``id`` (None when it has none), other items unchanged.
    """
    return [b.get("id") if isinstance(b, dict) else b for b in blocks]


def expect_tools(impl, events, expected, what):
    """Assert the blocks of ``assemble_tool_uses(events)``: their ids first, then each block.

    Args:
        impl: the implementation under test.
        events: the stream events to pass.
        expected: the tool_use blocks it must return, in order.
        what: the input, described briefly for a failure message.

    Raises:
        AssertionError: the ids or a block differ (the message names the first difference).
    """
    got = assembled(impl, events, what)
    expect(ids(got), ids(expected), f"ids from assemble_tool_uses({what})")
    expect(got, expected, f"assemble_tool_uses({what})")


# --------------------------------------------------------------------------- 01.1 parse

@check(points=1, hint="Join all the fragments into one text first, then parse that text once; "
                      "a fragment may begin or end with a space that belongs to a string.")
def check_parse_joins_fragments(impl):
    for fragments, expected in [
            (['{"path": "a', '.py", "n": ', "3}"], {"path": "a.py", "n": 3}),
            (['{"pattern": "round', ' money", "flags": ', '[" -i", true]}'],
             {"pattern": "round money", "flags": [" -i", True]}),
            (['{"query": "ポート', '番号 8443"}'], {"query": "ポート番号 8443"})]:
        returns(lambda: impl.parse_tool_input(fragments), expected,
                f"parse_tool_input({fragments!r})")


@check(points=1, hint="A tool without arguments streams no fragment, or only empty ones: "
                      "what matters is the joined text.")
def check_parse_empty_means_no_arguments(impl):
    for fragments in ([], [""], ["", ""]):
        returns(lambda: impl.parse_tool_input(fragments), {}, f"parse_tool_input({fragments!r})")


@check(points=1, hint="A text that is not exactly one complete JSON object must raise "
                      "ValueError: a cut prefix, two objects, an array, a string, a number, null.")
def check_parse_refuses_incomplete_and_non_objects(impl):
    for fragments in (['{"path": "a.p'], ['{"path": ', '"a.py"'], ['{"a": 1}', '{"b": 2}'],
                      ["[1, 2]"], ['"a.py"'], ["42"], ["null"]):
        expect_raises(ValueError, lambda: impl.parse_tool_input(fragments),
                      f"parse_tool_input({fragments!r})")


# --------------------------------------------------------------------------- 01.2 assemble

@check(points=2, hint="The input at content_block_start is always {}: the real input is the "
                      "joined input_json_delta fragments of that block.")
def check_input_comes_from_the_deltas(impl):
    text = json.dumps({"pattern": "round_money", "path": "invoicing"})
    events = reply([tool_events(0, "toolu_1", "grep", split(text, 5, 17, 30))])
    expect_tools(impl, events,
                 [tool("toolu_1", "grep", {"pattern": "round_money", "path": "invoicing"})],
                 "one grep streamed in 4 fragments")


@check(points=2, hint="Fragments are cut anywhere: inside an escape, between two Japanese "
                      "characters, next to U+2028. Never parse or decode a fragment alone.")
def check_fragments_cut_anywhere(impl):
    value = {"old": 'say "hi" \\ done', "new": "caf\u00e9 \u2713"}
    text = json.dumps(value)  # ensure_ascii: \u00e9 escapes to split
    cuts = [text.index("\\") + 1, text.index("\\u") + 3]
    events = reply([text_events(0, ["Editing ", "now."]),
                    tool_events(1, "toolu_9", "edit_file", split(text, *cuts))])
    expect_tools(impl, events, [tool("toolu_9", "edit_file", value)],
                 "an edit_file cut inside escapes")
    value = {"path": "docs/設計.md", "new": "行1\u2028行2 ", "note": "完了"}
    text = json.dumps(value, ensure_ascii=False)
    cuts = sorted([text.index("設") + 1, text.index("\u2028"), text.index("\u2028") + 1,
                   text.index(" ")])
    events = reply([tool_events(0, "toolu_ja", "write_file", split(text, *cuts))])
    expect_tools(impl, events, [tool("toolu_ja", "write_file", value)],
                 "a write_file of Japanese text with U+2028")


@check(points=2, hint="Several tool_use blocks in one reply: each block index has its own "
                      "fragments; return every complete one, in stream order.")
def check_several_tool_uses_in_one_reply(impl):
    blocks = [thinking_events(0, "Three reads, then a listing."), text_events(1, ["Reading."])]
    for i in range(2, 5):
        blocks.append(tool_events(i, f"toolu_{i}", "read_file",
                                  split(json.dumps({"path": f"f{i}.py"}), 4, 9)))
    blocks.append(tool_events(5, "toolu_5", "list_dir", [""]))
    expect_tools(impl, reply(blocks), [tool("toolu_2", "read_file", {"path": "f2.py"}),
                                       tool("toolu_3", "read_file", {"path": "f3.py"}),
                                       tool("toolu_4", "read_file", {"path": "f4.py"}),
                                       tool("toolu_5", "list_dir", {})],
                 "thinking, text, 3 read_file, list_dir")


@check(points=1, hint="Return each tool_use once: once a block has stopped, the stop of a "
                      "later text or thinking block is not its stop.")
def check_each_block_returned_once(impl):
    events = reply([tool_events(0, "toolu_1", "read_file", ['{"path": "a.py"}']),
                    text_events(1, ["Reading a.py while I think."]),
                    thinking_events(2, "Then grep."),
                    tool_events(3, "toolu_2", "grep", ['{"pattern": "x"}']),
                    text_events(4, ["Done."])])
    expect(ids(assembled(impl, events, "tool, text, thinking, tool, text")),
           ["toolu_1", "toolu_2"], "ids from assemble_tool_uses(tool, text, thinking, tool, text)")


@check(points=1, hint="Only blocks of type tool_use are yours to run: a server_tool_use "
                      "(web search) streams input too, but the API runs it.")
def check_server_tools_are_not_returned(impl):
    events = reply([tool_events(0, "srvtoolu_1", "web_search", ['{"query": "PEP 8"}'],
                                kind="server_tool_use"),
                    [{"type": "content_block_start", "index": 1, "content_block": {
                        "type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
                        "content": []}},
                     {"type": "content_block_stop", "index": 1}],
                    tool_events(2, "toolu_1", "read_file", ['{"path": "a.py"}'])])
    expect_tools(impl, events, [tool("toolu_1", "read_file", {"path": "a.py"})],
                 "server_tool_use, its result, read_file")


@check(points=2, hint="A tool_use cut by max_tokens has incomplete JSON: leave it out, and "
                      "keep every complete one, the last block included.")
def check_cut_by_max_tokens_is_left_out(impl):
    full = tool_events(1, "toolu_1", "read_file", ['{"path": "a.py"}'])
    cut = tool_events(2, "toolu_2", "edit_file", ['{"path": "b.py", ', '"new": "ha'])
    expect_tools(impl, reply([full, cut], "max_tokens"),
                 [tool("toolu_1", "read_file", {"path": "a.py"})],
                 "max_tokens reply: read_file, edit_file cut in its JSON")
    last = tool_events(2, "toolu_2", "grep", ['{"pattern": ', '"TODO"}'])
    expect_tools(impl, reply([full, last], "max_tokens"),
                 [tool("toolu_1", "read_file", {"path": "a.py"}),
                  tool("toolu_2", "grep", {"pattern": "TODO"})],
                 "max_tokens reply: read_file, then a grep whose JSON is complete")


@check(points=2, hint="An argument-less call is a possible cut only when it is the LAST block "
                      "of a max_tokens reply; anywhere else (or in another reply) it runs with {}.")
def check_argument_less_calls(impl):
    noargs = [tool_events(0, "toolu_a", "list_dir", []),
              tool_events(1, "toolu_b", "git_status", [""])]
    what = "tool_use reply: list_dir [], git_status ['']"
    expect(ids(assembled(impl, reply(noargs, "tool_use"), what)), ["toolu_a", "toolu_b"],
           f"ids from assemble_tool_uses({what})")
    for last in ([], [""]):
        events = reply([tool_events(0, "toolu_a", "list_dir", [""]),
                        tool_events(1, "toolu_1", "read_file", ['{"path": "a.py"}']),
                        tool_events(2, "toolu_b", "git_status", last)], "max_tokens")
        what = f"max_tokens reply: list_dir [''], read_file, git_status {last!r}"
        expect(ids(assembled(impl, events, what)), ["toolu_a", "toolu_1"],
               f"ids from assemble_tool_uses({what})")
    events = reply([tool_events(0, "toolu_a", "list_dir", [""]),
                    text_events(1, ["I will now list the fil"])], "max_tokens")
    what = "max_tokens reply: list_dir [''], then a text block"
    expect(ids(assembled(impl, events, what)), ["toolu_a"], f"ids from assemble_tool_uses({what})")


@check(points=1, hint="A stream that broke off (no message_delta) did not end normally: a "
                      "tool_use without its content_block_stop, or an argument-less last one, "
                      "gives no call.")
def check_unfinished_block_left_out(impl):
    events = reply([tool_events(0, "toolu_1", "read_file", ['{"path": "a.py"}']),
                    tool_events(1, "toolu_2", "read_file", ['{"path": "b.py"}'], stop=False)],
                   ended=False)
    what = "stream broke off inside a 2nd read_file, before its content_block_stop"
    expect(ids(assembled(impl, events, what)), ["toolu_1"], f"ids from assemble_tool_uses({what})")
    events = reply([tool_events(0, "toolu_a", "list_dir", [""]),
                    tool_events(1, "toolu_1", "read_file", ['{"path": "a.py"}']),
                    tool_events(2, "toolu_b", "git_status", [""])], ended=False)
    what = "stream broke off after list_dir [''], read_file, git_status [''] (no message_delta)"
    expect(ids(assembled(impl, events, what)), ["toolu_a", "toolu_1"],
           f"ids from assemble_tool_uses({what})")
