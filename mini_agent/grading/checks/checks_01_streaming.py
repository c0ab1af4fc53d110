"""Graded checks for exercise 01 (assemble streamed tool_use blocks); ``impl`` is the module.

Each check targets a typical wrong answer: parsing each fragment alone, taking ``input`` from
``content_block_start``, failing on a tool without arguments, running a tool_use cut by
``max_tokens``, losing the order of parallel calls, returning a block twice.
"""

from __future__ import annotations

import copy
import json

from mini_agent.grading import check


def tool_events(index, tool_id, name, fragments):
    events = [{"type": "content_block_start", "index": index, "content_block": {
        "type": "tool_use", "id": tool_id, "name": name, "input": {}}}]
    events += [{"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": f}} for f in fragments]
    return events + [{"type": "content_block_stop", "index": index}]


def text_events(index, pieces):
    events = [{"type": "content_block_start", "index": index,
               "content_block": {"type": "text", "text": ""}}]
    events += [{"type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": p}} for p in pieces]
    return events + [{"type": "content_block_stop", "index": index}]


def reply(blocks, stop_reason="tool_use"):
    events = [{"type": "message_start", "message": {"id": "msg_1", "content": [],
                                                    "usage": {"input_tokens": 10}}}]
    for b in blocks:
        events += b
    return events + [{"type": "message_delta", "delta": {"stop_reason": stop_reason},
                      "usage": {"output_tokens": 20}}, {"type": "message_stop"}]


def split(text, *cuts):
    pieces, last = [], 0
    for c in cuts:
        pieces.append(text[last:c])
        last = c
    return pieces + [text[last:]]


@check(points=1, hint="Join all the fragments first, then parse once.")
def check_parse_joins_fragments(impl):
    assert impl.parse_tool_input(['{"path": "a', '.py", "n": ', "3}"]) == {"path": "a.py", "n": 3}


@check(points=1, hint="A tool without arguments streams no (or only empty) fragments: {}.")
def check_parse_empty_means_no_arguments(impl):
    assert impl.parse_tool_input([]) == {}
    assert impl.parse_tool_input(["", ""]) == {}


@check(points=1, hint="Incomplete JSON must raise ValueError, not return a partial dict.")
def check_parse_incomplete_raises(impl):
    try:
        impl.parse_tool_input(['{"path": "a.p'])
    except ValueError:
        return
    raise AssertionError("parse_tool_input accepted an incomplete JSON object")


@check(points=2, hint="The input at content_block_start is always {}: use the joined deltas.")
def check_input_comes_from_the_deltas(impl):
    text = json.dumps({"pattern": "round_money", "path": "invoicing"})
    events = reply([tool_events(0, "toolu_1", "grep", split(text, 5, 17, 30))])
    assert impl.assemble_tool_uses(events) == [
        {"type": "tool_use", "id": "toolu_1", "name": "grep",
         "input": {"pattern": "round_money", "path": "invoicing"}}]


@check(points=2, hint="Fragments are cut anywhere, even inside an escape: never parse one alone.")
def check_fragments_split_inside_escapes(impl):
    value = {"old": 'say "hi" \\ done', "new": "caf\u00e9 \u2713"}
    text = json.dumps(value)  # ensure_ascii: \u00e9 escapes to split
    cuts = [text.index("\\") + 1, text.index("\\u") + 3]
    events = reply([text_events(0, ["Editing ", "now."]),
                    tool_events(1, "toolu_9", "edit_file", split(text, *cuts))])
    assert impl.assemble_tool_uses(events) == [
        {"type": "tool_use", "id": "toolu_9", "name": "edit_file", "input": value}]


@check(points=2, hint="Parallel calls: return every complete tool_use once, in stream order.")
def check_parallel_calls_in_order_once(impl):
    blocks = [text_events(0, ["Three reads."])]
    for i in range(1, 4):
        blocks.append(tool_events(i, f"toolu_{i}", "read_file",
                                  split(json.dumps({"path": f"f{i}.py"}), 4, 9)))
    blocks.append(tool_events(4, "toolu_4", "list_dir", [""]))
    events = reply(blocks)
    frozen = copy.deepcopy(events)
    out = impl.assemble_tool_uses(events)
    assert [b["id"] for b in out] == ["toolu_1", "toolu_2", "toolu_3", "toolu_4"]
    assert out[1]["input"] == {"path": "f2.py"} and out[3]["input"] == {}
    assert events == frozen, "the events were mutated"


@check(points=2, hint="A tool_use cut by max_tokens has incomplete JSON: leave it out.")
def check_cut_by_max_tokens_is_left_out(impl):
    full = tool_events(1, "toolu_1", "read_file", ['{"path": "a.py"}'])
    cut = tool_events(2, "toolu_2", "edit_file", ['{"path": "b.py", "new": "ha'])
    assert impl.assemble_tool_uses(reply([full, cut], "max_tokens")) == [
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}}]
    empty_cut = tool_events(2, "toolu_3", "list_dir", [""])
    assert [b["id"] for b in impl.assemble_tool_uses(reply([full, empty_cut], "max_tokens"))] \
        == ["toolu_1"]
