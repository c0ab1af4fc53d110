"""The default ``offline_client()`` behaves like the API: it caches, edits and compacts.

Prompt caching is always on (the simulator is the default usage model), top-level automatic
``cache_control`` and ``max_tokens: 0`` pre-warming work, and context editing and server-side
compaction run whenever a request asks for them with the beta flag the API requires. Every
call is the SDK call a user would make online (``tests/test_online.py`` repeats them).
"""

import warnings

import anthropic
import pytest

from mini_agent.offline import offline_client

SONNET = "claude-sonnet-5-5"
EPH = {"type": "ephemeral"}
SYSTEM = "You are a careful coding agent. " * 160          # 5,120 chars: 1,280 tokens
CONTEXT_BETA = "context-management-2025-06-27"
COMPACT_BETA = "compact-2026-01-12"
TOOLS = [{"name": "read_file", "description": "Read a file",
          "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]


def refusal(call, **kwargs):
    with pytest.raises(anthropic.BadRequestError) as info:
        call(**kwargs)
    assert info.value.status_code == 400
    return info.value.body["error"]["message"]


def tool_history(uses, result_chars=4000):
    """A user task, ``uses`` read_file exchanges (results of ``result_chars``), a question."""
    history = [{"role": "user", "content": "Find the bug."}]
    for k in range(uses):
        history.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Reading file {k}."},
            {"type": "tool_use", "id": f"toolu_{k:02d}", "name": "read_file",
             "input": {"path": f"src/m{k}.py"}}]})
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{k:02d}",
             "content": f"# module {k}\n" + "x = 1\n" * (result_chars // 6)}]})
    history.append({"role": "assistant", "content": "I have read them all."})
    history.append({"role": "user", "content": "What did you find?"})
    return history


def chat_history(exchanges, chars=8000):
    """``exchanges`` user/assistant text pairs of ``chars`` characters each, then a question."""
    history = []
    for k in range(exchanges):
        history.append({"role": "user", "content": f"Question {k}: " + "q" * chars})
        history.append({"role": "assistant", "content": f"Answer {k}: " + "a" * chars})
    history.append({"role": "user", "content": "And now?"})
    return history


# ------------------------------------------------------------------------- prompt caching

def test_prompt_caching_is_on_by_default():
    client = offline_client()
    system = [{"type": "text", "text": SYSTEM, "cache_control": EPH}]
    first = client.messages.create(model=SONNET, max_tokens=16, system=system,
                                   messages=[{"role": "user", "content": "Hi"}])
    second = client.messages.create(model=SONNET, max_tokens=16, system=system,
                                    messages=[{"role": "user", "content": "Hi again"}])
    assert first.usage.cache_creation_input_tokens == 1280
    assert first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == 1280
    assert second.usage.cache_creation_input_tokens == 0
    assert second.usage.input_tokens == 2          # "Hi again": 8 chars


def test_automatic_caching_moves_the_breakpoint_forward():
    client = offline_client()
    turn1 = [{"role": "user", "content": "First question?"}]
    first = client.messages.create(model=SONNET, max_tokens=16, system=SYSTEM,
                                   cache_control=EPH, messages=turn1)
    assert first.usage.cache_creation_input_tokens == 1280 + 4
    assert first.usage.input_tokens == 0
    turn2 = [*turn1, {"role": "assistant", "content": "An answer."},
             {"role": "user", "content": "Second question?"}]
    second = client.messages.create(model=SONNET, max_tokens=16, system=SYSTEM,
                                    cache_control=EPH, messages=turn2)
    assert second.usage.cache_read_input_tokens == 1284
    assert second.usage.cache_creation_input_tokens == 3 + 4
    assert second.usage.input_tokens == 0


def test_automatic_caching_takes_one_of_the_four_breakpoints():
    client = offline_client(max_retries=0)
    marked = [{"type": "text", "text": f"part {k}", "cache_control": EPH} for k in range(4)]
    message = refusal(client.messages.create, model=SONNET, max_tokens=16, system=marked,
                      cache_control=EPH, messages=[{"role": "user", "content": "Hi"}])
    assert message == "A maximum of 4 blocks with cache_control may be provided. Found 5."


def test_automatic_caching_refuses_an_unknown_ttl():
    client = offline_client(max_retries=0)
    message = refusal(client.messages.create, model=SONNET, max_tokens=16,
                      cache_control={"type": "ephemeral", "ttl": "2h"},
                      messages=[{"role": "user", "content": "Hi"}])
    assert message.startswith("cache_control.ttl")


def test_max_tokens_zero_prewarms_the_cache():
    client = offline_client()
    system = [{"type": "text", "text": SYSTEM, "cache_control": EPH}]
    warm = client.messages.create(model=SONNET, max_tokens=0, system=system,
                                  messages=[{"role": "user", "content": "warm up"}])
    assert warm.content == []
    assert warm.stop_reason == "max_tokens"
    assert warm.usage.output_tokens == 0
    assert warm.usage.cache_creation_input_tokens == 1280
    real = client.messages.create(model=SONNET, max_tokens=64, system=system,
                                  messages=[{"role": "user", "content": "Now the task"}])
    assert real.usage.cache_read_input_tokens == 1280
    assert real.content


def test_negative_max_tokens_is_refused():
    client = offline_client(max_retries=0)
    message = refusal(client.messages.create, model=SONNET, max_tokens=-1,
                      messages=[{"role": "user", "content": "Hi"}])
    assert message == "max_tokens: Input should be greater than or equal to 0"


# ------------------------------------------------------------------------- context editing

def clear_edit(keep=1):
    return {"type": "clear_tool_uses_20250919", "trigger": {"type": "tool_uses", "value": 1},
            "keep": {"type": "tool_uses", "value": keep}}


def test_context_editing_runs_when_the_request_asks_with_the_beta_flag():
    client = offline_client()
    reply = client.beta.messages.create(
        model=SONNET, max_tokens=16, tools=TOOLS, messages=tool_history(3),
        betas=[CONTEXT_BETA], context_management={"edits": [clear_edit(keep=1)]})
    edits = reply.context_management.applied_edits
    assert [e.type for e in edits] == ["clear_tool_uses_20250919"]
    assert edits[0].cleared_tool_uses == 2
    assert edits[0].cleared_input_tokens > 1500      # two results of ~1,000 tokens each


def test_context_management_needs_the_beta():
    client = offline_client(max_retries=0)
    message = refusal(client.messages.create, model=SONNET, max_tokens=16, tools=TOOLS,
                      messages=tool_history(3),
                      extra_body={"context_management": {"edits": [clear_edit()]}})
    assert message == "context_management: Extra inputs are not permitted"
    message = refusal(client.beta.messages.create, model=SONNET, max_tokens=16, tools=TOOLS,
                      messages=tool_history(3), betas=[COMPACT_BETA],
                      context_management={"edits": [clear_edit()]})
    assert CONTEXT_BETA in message


def test_count_tokens_applies_the_edits_and_reports_the_original_count():
    client = offline_client()
    history = tool_history(3)
    plain = client.beta.messages.count_tokens(model=SONNET, tools=TOOLS, messages=history,
                                              betas=[CONTEXT_BETA])
    edited = client.beta.messages.count_tokens(
        model=SONNET, tools=TOOLS, messages=history, betas=[CONTEXT_BETA],
        context_management={"edits": [clear_edit(keep=1)]})
    assert edited.context_management.original_input_tokens == plain.input_tokens
    assert plain.input_tokens - edited.input_tokens > 1500


# ------------------------------------------------------------------------- server compaction

def compact_edit(trigger=50_000, **extra):
    return {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": trigger},
            **extra}


def test_compaction_trigger_below_50000_is_refused():
    client = offline_client(max_retries=0)
    message = refusal(client.beta.messages.create, model=SONNET, max_tokens=16,
                      messages=chat_history(2), betas=[COMPACT_BETA],
                      context_management={"edits": [compact_edit(10_000)]})
    assert message.startswith("context_management.edits.0.trigger")
    assert "50000" in message


def test_compaction_runs_by_default_and_counts_its_iteration():
    client = offline_client()
    history = chat_history(30)                       # ~120,000 tokens
    with warnings.catch_warnings():
        warnings.simplefilter("error")               # the SDK warns on a malformed edit entry
        reply = client.beta.messages.create(
            model=SONNET, max_tokens=64, messages=history, betas=[COMPACT_BETA],
            context_management={"edits": [compact_edit()]})
    assert reply.content[0].type == "compaction"
    assert reply.content[0].content.startswith("## Task")
    assert reply.content[1].type == "text"
    applied = reply.context_management.applied_edits if reply.context_management else []
    assert [e for e in applied if e.type == "compact_20260112"] == []
    kinds = [it.type for it in reply.usage.iterations]
    assert kinds == ["compaction", "message"]
    compaction, sampling = reply.usage.iterations
    assert compaction.input_tokens > 50_000
    assert compaction.output_tokens > 0
    assert sampling.input_tokens < 10_000            # the model then saw the summary
    assert reply.usage.input_tokens + reply.usage.cache_read_input_tokens + \
        reply.usage.cache_creation_input_tokens == sampling.input_tokens + \
        sampling.cache_read_input_tokens + sampling.cache_creation_input_tokens


def test_compaction_block_round_trips_with_its_encrypted_content():
    client = offline_client()
    history = chat_history(30)
    reply = client.beta.messages.create(model=SONNET, max_tokens=64, messages=history,
                                        betas=[COMPACT_BETA],
                                        context_management={"edits": [compact_edit()]})
    block = reply.content[0].model_dump(exclude_none=True)
    assert block["encrypted_content"]
    follow = [*history, {"role": "assistant", "content": [block, {"type": "text",
                                                                  "text": "Noted."}]},
              {"role": "user", "content": "Continue."}]
    again = client.beta.messages.create(model=SONNET, max_tokens=64, messages=follow,
                                        betas=[COMPACT_BETA],
                                        context_management={"edits": [compact_edit()]})
    assert again.content[0].type == "text"           # nothing new to compact
    seen = client.offline_transport.requests[-1]["messages"]
    assert len(seen) <= 3                            # summary, reply, new question


def test_streamed_compaction_block_starts_empty_and_arrives_as_deltas():
    client = offline_client()
    stream = client.beta.messages.create(model=SONNET, max_tokens=64,
                                         messages=chat_history(30), betas=[COMPACT_BETA],
                                         context_management={"edits": [compact_edit()]},
                                         stream=True)
    events = list(stream)
    start = next(e for e in events if e.type == "content_block_start")
    assert start.content_block.type == "compaction"
    assert start.content_block.content is None
    deltas = [e.delta for e in events if e.type == "content_block_delta" and e.index == 0]
    assert deltas and all(d.type == "compaction_delta" for d in deltas)
    assert "".join(d.content or "" for d in deltas).startswith("## Task")
    final = next(e for e in events if e.type == "message_delta")
    assert [it.type for it in final.usage.iterations] == ["compaction", "message"]
