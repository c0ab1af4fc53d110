"""The offline API's defaults, confirmed against the real API: opt-in, never run in CI.

Run with ``MINI_AGENT_ONLINE_TESTS=1 ANTHROPIC_API_KEY=... pytest tests/test_online_api_rules.py``.
The same calls as ``tests/test_offline_defaults.py`` and ``tests/test_prompt_cache_rules.py``;
exact token counts differ online (the kit estimates chars/4), so these assert the relations
the rules promise (a read equals the earlier write, a miss reads less). About 30 small
requests, a few cents in all; the compaction run (~55,000 input tokens, about $0.15 on the
default model) also needs ``MINI_AGENT_ONLINE_EXPENSIVE=1``. ``tests/test_api_version.py``
runs its refusals online too.
"""

import os

import anthropic
import pytest

from mini_agent.harness import config

pytestmark = [
    pytest.mark.online,
    pytest.mark.skipif(os.environ.get("MINI_AGENT_ONLINE_TESTS") != "1" or not config.is_online(),
                       reason="online tests need MINI_AGENT_ONLINE_TESTS=1 and ANTHROPIC_API_KEY"),
]

EPH = {"type": "ephemeral"}
SYSTEM = "You are a careful coding agent. Prefer read_file over cat. " * 120   # > 1,024 tokens
TOOLS = [{"name": "read_file", "description": "Read a file",
          "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]


@pytest.fixture
def client():
    return anthropic.Anthropic(max_retries=2)


def model():
    return config.model_name()


def marked_system(tag):
    return [{"type": "text", "text": f"[{tag}] " + SYSTEM, "cache_control": EPH}]


def test_a_marked_prefix_is_written_then_read(client, request):
    system = marked_system(request.node.name)
    first = client.messages.create(model=model(), max_tokens=8, system=system,
                                   messages=[{"role": "user", "content": "Hi"}])
    second = client.messages.create(model=model(), max_tokens=8, system=system,
                                    messages=[{"role": "user", "content": "Hi again"}])
    assert first.usage.cache_creation_input_tokens > 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens


def test_automatic_caching_moves_the_breakpoint(client, request):
    system = f"[{request.node.name}] " + SYSTEM
    turn1 = [{"role": "user", "content": "First question?"}]
    first = client.messages.create(model=model(), max_tokens=8, system=system,
                                   cache_control=EPH, messages=turn1)
    turn2 = [*turn1, {"role": "assistant", "content": "An answer."},
             {"role": "user", "content": "Second question?"}]
    second = client.messages.create(model=model(), max_tokens=8, system=system,
                                    cache_control=EPH, messages=turn2)
    assert first.usage.cache_creation_input_tokens > 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_creation_input_tokens > 0


def test_max_tokens_zero_prewarms(client, request):
    system = marked_system(request.node.name)
    warm = client.messages.create(model=model(), max_tokens=0, system=system,
                                  messages=[{"role": "user", "content": "warm up"}])
    assert warm.content == [] and warm.usage.output_tokens == 0
    real = client.messages.create(model=model(), max_tokens=16, system=system,
                                  messages=[{"role": "user", "content": "Now the task"}])
    assert real.usage.cache_read_input_tokens == warm.usage.cache_creation_input_tokens > 0


def _task(request):
    return {"type": "text", "text": f"[{request.node.name}] task " + "t" * 400}


def _lookback(client, request, later):
    system = marked_system(request.node.name)
    task = _task(request)
    first = client.messages.create(model=model(), max_tokens=8, system=system,
                                   messages=[{"role": "user", "content": [{**task,
                                                                          "cache_control": EPH}]}])
    blocks = [{"type": "text", "text": f"note {k:03d}"} for k in range(later)]
    blocks[-1] = {**blocks[-1], "cache_control": EPH}
    second = client.messages.create(model=model(), max_tokens=8, system=system,
                                    messages=[{"role": "user", "content": [task, *blocks]}])
    return first.usage.cache_creation_input_tokens, second.usage.cache_read_input_tokens


def test_lookback_counts_the_breakpoint(client, request):
    written, read_19 = _lookback(client, request, 19)
    assert read_19 == written                 # the entry 19 positions back is found
    _, read_20 = _lookback(client, request, 20)
    assert read_20 < written                  # 20 positions back: only the system entry


def test_a_wide_parallel_turn_is_one_position(client, request):
    system = marked_system(request.node.name)
    task = _task(request)
    first = client.messages.create(model=model(), max_tokens=8, system=system, tools=TOOLS,
                                   messages=[{"role": "user", "content": [{**task,
                                                                          "cache_control": EPH}]}])
    uses = [{"type": "tool_use", "id": f"toolu_{k:02d}", "name": "read_file",
             "input": {"path": f"f{k}.py"}} for k in range(30)]
    results = [{"type": "tool_result", "tool_use_id": f"toolu_{k:02d}", "content": f"body {k}"}
               for k in range(30)]
    results[-1] = {**results[-1], "cache_control": EPH}
    second = client.messages.create(model=model(), max_tokens=8, system=system, tools=TOOLS,
                                    messages=[{"role": "user", "content": [task]},
                                              {"role": "assistant", "content": [
                                                  {"type": "text", "text": "Reading all."},
                                                  *uses]},
                                              {"role": "user", "content": results}])
    assert second.usage.cache_read_input_tokens >= first.usage.cache_creation_input_tokens


def test_context_editing_and_count_tokens(client):
    history = [{"role": "user", "content": "Find the bug."}]
    for k in range(3):
        history += [{"role": "assistant", "content": [
                        {"type": "text", "text": f"Reading file {k}."},
                        {"type": "tool_use", "id": f"toolu_{k:02d}", "name": "read_file",
                         "input": {"path": f"src/m{k}.py"}}]},
                    {"role": "user", "content": [{"type": "tool_result",
                                                  "tool_use_id": f"toolu_{k:02d}",
                                                  "content": "x = 1\n" * 600}]}]
    history += [{"role": "assistant", "content": "I have read them all."},
                {"role": "user", "content": "What did you find?"}]
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "tool_uses", "value": 1},
            "keep": {"type": "tool_uses", "value": 1}}
    reply = client.beta.messages.create(model=model(), max_tokens=16, tools=TOOLS,
                                        messages=history,
                                        betas=["context-management-2025-06-27"],
                                        context_management={"edits": [edit]})
    assert reply.context_management.applied_edits[0].cleared_tool_uses == 2
    counted = client.beta.messages.count_tokens(model=model(), tools=TOOLS, messages=history,
                                                betas=["context-management-2025-06-27"],
                                                context_management={"edits": [edit]})
    assert counted.context_management.original_input_tokens > counted.input_tokens


def test_compaction_trigger_under_50000_is_refused(client):
    with pytest.raises(anthropic.BadRequestError) as info:
        client.beta.messages.create(
            model=model(), max_tokens=16, messages=[{"role": "user", "content": "Hi"}],
            betas=["compact-2026-01-12"],
            context_management={"edits": [{"type": "compact_20260112", "trigger": {
                "type": "input_tokens", "value": 10_000}}]})
    assert "50000" in info.value.body["error"]["message"].replace(",", "")


@pytest.mark.skipif(os.environ.get("MINI_AGENT_ONLINE_EXPENSIVE") != "1",
                    reason="about $0.15: needs MINI_AGENT_ONLINE_EXPENSIVE=1")
def test_compaction_block_and_its_iteration(client):
    from mini_agent.core.long_session import long_session
    history, _ = long_session(75)
    history = history[:-1]
    tools = [{"name": n, "description": n, "input_schema": {"type": "object"}}
             for n in ("read_file", "grep", "run_bash", "edit_file")]
    stream = client.beta.messages.create(
        model=model(), max_tokens=256, messages=history, tools=tools, stream=True,
        betas=["compact-2026-01-12"],
        context_management={"edits": [{"type": "compact_20260112", "trigger": {
            "type": "input_tokens", "value": 50_000}}]})
    events = list(stream)
    start = next(e for e in events if e.type == "content_block_start")
    assert start.content_block.type == "compaction" and start.content_block.content is None
    assert any(e.type == "content_block_delta" and e.delta.type == "compaction_delta"
               for e in events)
    final = next(e for e in events if e.type == "message_delta")
    assert [it.type for it in final.usage.iterations][0] == "compaction"
