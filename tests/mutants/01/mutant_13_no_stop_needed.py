"""MUTANT (wrong on purpose): Returns every tool_use whose JSON parses at the end, even one that never got its content_block_stop; exposed by a stream that broke off inside a read_file.

Exercise 01: assemble streamed tool_use blocks (notebooks/01_agent_loop.ipynb).

The Messages API streams a reply as events. A ``tool_use`` block arrives in pieces::

    {"type": "content_block_start", "index": 1,
     "content_block": {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {}}}
    {"type": "content_block_delta", "index": 1,
     "delta": {"type": "input_json_delta", "partial_json": "{\\"pattern\\": \\"ro"}}
    {"type": "content_block_delta", "index": 1,
     "delta": {"type": "input_json_delta", "partial_json": "und\\"}"}}
    {"type": "content_block_stop", "index": 1}
    ...
    {"type": "message_delta", "delta": {"stop_reason": "tool_use" | "end_turn" | "max_tokens"}}

Seed 002's pitfall: ``input`` at ``content_block_start`` is always ``{}``; the real input is the
JOINED ``partial_json`` fragments, complete only at ``content_block_stop``. Fragments are cut
anywhere (inside a string, inside an escape), so none of them can be parsed alone.

* 01.1 ``parse_tool_input(fragments)``: join and parse; no fragments (or only empty ones)
  means a tool without arguments: ``{}``.
* 01.2 ``assemble_tool_uses(events)``: the complete tool_use blocks of one reply, in order.
  A tool_use cut off by ``max_tokens`` (its JSON does not parse) must NOT be returned: a
  half-written call must never run.

Grade with ``mini-agent grade 01``. The kit's own version is ``mini_agent.core.streaming``.
"""

from __future__ import annotations

import json


def parse_tool_input(fragments: list[str]) -> dict:
    """Join the ``partial_json`` fragments of one tool_use and parse them into its input.

    Args: fragments: the strings of its ``input_json_delta`` events, in order.
    Returns: the input dict; ``{}`` when the joined text is empty.
    Raises: ValueError (``json.JSONDecodeError`` is one) when the joined text is not a complete
    JSON object. Example: ``parse_tool_input(['{"a": ', '1}']) == {"a": 1}``.
    """
    text = "".join(fragments)
    if text == "":
        return {}
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"tool input must be a JSON object, got {type(value).__name__}")
    return value


def assemble_tool_uses(events: list[dict]) -> list[dict]:
    """Return the complete tool_use blocks of one streamed reply, in the order they stream.

    Args: events: the reply's raw stream events as dicts (see the module docstring); text,
    ping and other events may be mixed in.
    Returns: ``[{"type": "tool_use", "id": str, "name": str, "input": dict}, ...]``; a
    tool_use whose fragments do not parse (cut by ``max_tokens``) is left out, and so is an
    argument-less one that is the last block of a reply that did not end normally
    (``stop_reason`` ``max_tokens``, or no ``message_delta`` at all: it may be a cut too), and
    so is one that never got its ``content_block_stop`` (the stream broke off). Only
    ``tool_use`` blocks count (a ``server_tool_use`` is run by the API). Each block is returned
    once. The events are not mutated.
    """
    drafts: dict[int, dict] = {}
    order: list[int] = []
    stop_reason = None
    last = None  # index of the reply's last block
    for event in events:
        kind = event.get("type")
        if kind == "content_block_start":
            last = event["index"]
        if kind == "content_block_start" and event["content_block"].get("type") == "tool_use":
            block = event["content_block"]
            drafts[event["index"]] = {"id": block["id"], "name": block["name"], "fragments": [],
                                      "stopped": False}
            order.append(event["index"])
        elif kind == "content_block_delta" and event["index"] in drafts:
            delta = event["delta"]
            if delta.get("type") == "input_json_delta":
                drafts[event["index"]]["fragments"].append(delta.get("partial_json") or "")
        elif kind == "content_block_stop" and event["index"] in drafts:
            drafts[event["index"]]["stopped"] = True
        elif kind == "message_delta":
            stop_reason = (event.get("delta") or {}).get("stop_reason")
    blocks = []
    for index in order:
        draft = drafts[index]
        try:
            tool_input = parse_tool_input(draft["fragments"])
        except ValueError:
            continue  # cut by max_tokens: never run a half-written call
        if (stop_reason in ("max_tokens", None) and index == last
                and not "".join(draft["fragments"])):
            continue
        blocks.append({"type": "tool_use", "id": draft["id"], "name": draft["name"],
                       "input": tool_input})
    return blocks
