"""Prompt-cache rules of the current docs, measured through the SDK on the default client.

* The lookback window is 20 positions counting the breakpoint itself: an entry 19 positions
  before the breakpoint is read, one 20 positions before is not.
* A run of consecutive ``tool_use`` blocks, or of ``tool_result`` blocks, is one position, so
  a wide parallel turn stays inside the window.
* The minimum cacheable length is the model's, from the current table.
"""

import pytest

from mini_agent.offline import offline_client

SONNET = "claude-sonnet-5-5"
EPH = {"type": "ephemeral"}
SYSTEM = [{"type": "text", "text": "s" * 8000, "cache_control": EPH}]     # 2,000 tokens
TOOLS = [{"name": "read_file", "description": "Read a file",
          "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
TASK = {"type": "text", "text": "t" * 400}                                # 100 tokens


def marked(block):
    return {**block, "cache_control": EPH}


def filler(n):
    return [{"type": "text", "text": f"note {k:03d}"} for k in range(n)]   # 2 tokens each


def two_requests(later_blocks):
    """Write an entry at the task block, then send the task plus ``later_blocks`` (the last
    one marked) in the same user message. Returns the second request's usage."""
    client = offline_client()
    client.messages.create(model=SONNET, max_tokens=8, system=SYSTEM,
                           messages=[{"role": "user", "content": [marked(TASK)]}])
    later = [*later_blocks[:-1], marked(later_blocks[-1])]
    return client.messages.create(model=SONNET, max_tokens=8, system=SYSTEM,
                                  messages=[{"role": "user", "content": [TASK, *later]}]).usage


def test_entry_19_positions_back_is_read():
    usage = two_requests(filler(19))
    assert usage.cache_read_input_tokens == 2100          # system + task
    assert usage.cache_creation_input_tokens == 19 * 2


def test_entry_20_positions_back_is_out_of_the_window():
    usage = two_requests(filler(20))
    assert usage.cache_read_input_tokens == 2000          # the system breakpoint only
    assert usage.cache_creation_input_tokens == 100 + 20 * 2


def parallel_turn(width):
    uses = [{"type": "tool_use", "id": f"toolu_{k:02d}", "name": "read_file",
             "input": {"path": f"f{k}.py"}} for k in range(width)]
    results = [{"type": "tool_result", "tool_use_id": f"toolu_{k:02d}", "content": f"body {k}"}
               for k in range(width)]
    results[-1] = marked(results[-1])
    return [{"role": "assistant", "content": [{"type": "text", "text": "Reading all."},
                                              *uses]},
            {"role": "user", "content": results}]


@pytest.mark.parametrize("width", [1, 12, 30])
def test_a_run_of_parallel_tool_blocks_is_one_position(width):
    client = offline_client()
    first = client.messages.create(model=SONNET, max_tokens=8, system=SYSTEM, tools=TOOLS,
                                   messages=[{"role": "user", "content": [marked(TASK)]}])
    written = first.usage.cache_creation_input_tokens + first.usage.cache_read_input_tokens
    second = client.messages.create(
        model=SONNET, max_tokens=8, system=SYSTEM, tools=TOOLS,
        messages=[{"role": "user", "content": [TASK]}, *parallel_turn(width)])
    # task, the text, the tool_use run, the tool_result run: 4 positions, whatever the width
    assert second.usage.cache_read_input_tokens == written


@pytest.mark.parametrize("model, minimum", [
    ("claude-opus-5", 512), ("claude-fable-5-1", 512), ("claude-mythos-5-1", 512),
    ("claude-sonnet-5-5", 1024), ("claude-opus-4-8", 1024), ("claude-sonnet-4-6", 1024),
    ("claude-opus-4-7", 2048),
    ("claude-opus-4-6", 4096), ("claude-haiku-4-5", 4096)])
def test_minimum_cacheable_length_per_model(model, minimum):
    client = offline_client()

    def written(tokens):
        system = [{"type": "text", "text": "m" * (4 * tokens), "cache_control": EPH}]
        usage = client.messages.create(model=model, max_tokens=8, system=system,
                                       messages=[{"role": "user", "content": "Hi"}]).usage
        return usage.cache_creation_input_tokens

    assert written(minimum - 1) == 0
    assert written(minimum) == minimum
