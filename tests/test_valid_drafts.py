"""The loader's no-repair test (``core/transcripts/valid_drafts``) against the repairs it skips.

Whenever ``blocks_valid`` and ``history_valid`` both say yes, running every repair
(``clean_blocks`` then ``finish`` without the shortcut) must report nothing and give the
same messages, usage and times, and ``validate_messages`` must accept them; a no only costs
time. Drafts are generated both at random (mostly damaged) and as valid histories with at
most one damage, so that both answers are exercised.
"""

from __future__ import annotations

import copy

from hypothesis import given, settings, strategies as st

from mini_agent.core.messages import validate_messages
from mini_agent.core.sample_sessions import sample_session_jsonl
from mini_agent.core.transcripts import claude_code, parse_text
from mini_agent.core.transcripts.drafts import MessageDraft, TranscriptError
from mini_agent.core.transcripts.repair import clean_blocks, finish
from mini_agent.core.transcripts.valid_drafts import blocks_valid, history_valid

_MARK = {"type": "ephemeral"}
_IDS = st.sampled_from(["t1", "t2", "t3"])
_ODD_BLOCKS = [
    {"type": "text", "text": "  \n"}, {"type": "text", "text": ""}, {"type": "text", "text": 5},
    {"type": "text", "text": "a", "cache_control": _MARK},
    {"type": "text", "text": "a", "cache_control": None},
    {"type": "text", "text": "a", "cache_control": {"type": "persistent"}},
    {"type": "text", "text": "a", "timestamp": 3}, {"type": "text"}, {"text": "no type"},
    {"type": "bogus"}, {"type": ["text"], "text": "a"}, {"type": "thinking", "thinking": ""},
    {"type": "thinking", "thinking": "hm", "signature": "s"},
    {"type": "redacted_thinking", "data": "x"},
    {"type": "image", "source": {"type": "base64", "data": "", "cache_control": _MARK}},
    {"type": "image", "source": {"type": "url", "url": "u"}},
    {"type": "image", "source": {"type": "url", "url": "u", "x": [{"cache_control": _MARK}] * 5}},
    {"type": "tool_use", "id": "", "name": "grep", "input": {}},
    {"type": "tool_use", "id": 7, "name": "grep", "input": {}},
    {"type": "tool_use", "id": "t9", "name": "grep", "input": "ls"},
    {"type": "tool_use", "id": "t8", "name": "grep", "input": {"a": [{"cache_control": _MARK}]}},
    {"type": "tool_use", "id": "t7", "name": "grep",
     "input": {"a": [{"cache_control": _MARK}] * 5}},
    {"type": "tool_result", "tool_use_id": 3, "content": "x"},
    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "x"}]},
    {"type": "tool_result", "tool_use_id": "t1", "content": "x", "is_error": {"cache_control":
                                                                               _MARK}},
    {"type": "tool_result", "tool_use_id": "t1"},
    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": " "}]},
    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "bogus"}]},
    {"type": "web_search_tool_result", "tool_use_id": "t1", "content": []},
]
_BLOCK = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(["go", "ok"])),
    st.builds(lambda i: {"type": "tool_use", "id": i, "name": "grep", "input": {"p": "x"}},
              _IDS),
    st.builds(lambda i, c: {"type": "tool_result", "tool_use_id": i, "content": c}, _IDS,
              st.sampled_from(["out", "a\nb"])),
    st.sampled_from(_ODD_BLOCKS).map(copy.deepcopy))
_RANDOM = st.lists(st.builds(lambda role, blocks, n: MessageDraft(role, blocks, "line", [n]),
                             st.sampled_from(["user", "assistant", "system"]),
                             st.lists(_BLOCK, max_size=4), st.integers(1, 9)), max_size=6)


@st.composite
def _damaged_histories(draw) -> list[MessageDraft]:
    """A valid history of 1-4 exchanges, then up to two damages from :data:`_DAMAGE`."""
    drafts, line, calls = [MessageDraft("user", [{"type": "text", "text": "task"}], "line",
                                        [1], time=1.0)], 1, 0
    for _ in range(draw(st.integers(1, 4))):
        ids = [f"toolu_{calls + k}" for k in range(draw(st.integers(0, 2)))]
        calls += len(ids)
        line += 1
        drafts.append(MessageDraft(
            "assistant", [{"type": "text", "text": "look"}] + [
                {"type": "tool_use", "id": x, "name": "grep", "input": {"p": "x"}} for x in ids],
            "line", [line], {"input_tokens": 3, "output_tokens": 5,
                             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 9},
            time=draw(st.sampled_from([None, 2.0]))))
        if ids or draw(st.booleans()):
            line += 1
            drafts.append(MessageDraft("user", [
                {"type": "tool_result", "tool_use_id": x, "content": "out"} for x in ids] + (
                [] if ids else [{"type": "text", "text": "more"}]), "line", [line]))
    for damage in draw(st.lists(st.sampled_from(_DAMAGE), max_size=2)):
        damage(drafts, draw(st.integers(0, 99)), draw(st.integers(0, 99)),
               draw(st.sampled_from(_ODD_BLOCKS + _PLAIN_BLOCKS)))
    return drafts


_PLAIN_BLOCKS = [{"type": "text", "text": "note"},
                 {"type": "tool_result", "tool_use_id": "toolu_0", "content": "again"}]


def _swap_roles(drafts, k, _, __):
    drafts[k % len(drafts)].role = "user" if drafts[k % len(drafts)].role == "assistant" \
        else "assistant"


def _drop_draft(drafts, k, _, __):
    if len(drafts) > 1:
        del drafts[k % len(drafts)]


def _empty_draft(drafts, k, _, __):
    drafts[k % len(drafts)].blocks = []


def _add_block(drafts, k, at, block):
    target = drafts[k % len(drafts)]
    target.blocks.insert(at % (len(target.blocks) + 1), copy.deepcopy(block))


def _reuse_id(drafts, k, _, __):
    # a later call takes an earlier call's id, and so does its result
    uses = [b for d in drafts for b in d.blocks if b.get("type") == "tool_use"]
    if len(uses) > 1:
        old, new = uses[k % len(uses)]["id"], uses[(k + 1) % len(uses)]["id"]
        if old == new:
            return
        for block in (b for d in drafts for b in d.blocks):
            if block.get("id") == old:
                block["id"] = new
            if block.get("tool_use_id") == old:
                block["tool_use_id"] = new


def _drop_block(drafts, k, at, _):
    target = drafts[k % len(drafts)]
    if target.blocks:
        del target.blocks[at % len(target.blocks)]


def _reverse_blocks(drafts, k, _, __):
    drafts[k % len(drafts)].blocks.reverse()


def _move_block(drafts, k, to, _):
    source, target = drafts[k % len(drafts)], drafts[to % len(drafts)]
    if source.blocks:
        target.blocks.append(source.blocks.pop(to % len(source.blocks)))


_DAMAGE = [_swap_roles, _drop_draft, _empty_draft, _add_block, _reuse_id, _reverse_blocks,
           _drop_block, _move_block]


def _fast_equals_repairs(drafts: list[MessageDraft]) -> bool:
    """Assert the shortcut's result is the repairs' when both tests say yes; say if they did."""
    fast, slow = copy.deepcopy(drafts), copy.deepcopy(drafts)
    if not (blocks_valid(fast) and history_valid(fast)):
        return False
    repairs: list[str] = []
    clean_blocks(slow, repairs)
    expected = finish(slow, repairs, "x.jsonl")  # every repair, then validate_messages
    # (raising here, TranscriptError included, fails the test: a yes must mean valid)
    assert repairs == []
    shortcut: list[str] = []
    assert finish(fast, shortcut, "x.jsonl", blocks_checked=True) == expected
    assert shortcut == []
    validate_messages(expected[0], request=False)
    return True


@given(_RANDOM)
@settings(max_examples=400, deadline=None)
def test_random_drafts_taken_as_they_are_need_no_repair(drafts):
    _fast_equals_repairs(drafts)


@given(_damaged_histories())
@settings(max_examples=1500, deadline=None)
def test_damaged_histories_taken_as_they_are_need_no_repair(drafts):
    _fast_equals_repairs(drafts)


def test_valid_histories_are_taken_as_they_are():
    # not vacuous: an undamaged history passes both tests (and equals the repairs' result)
    history = [
        MessageDraft("user", [{"type": "text", "text": "task"}], "line", [1]),
        MessageDraft("assistant", [{"type": "tool_use", "id": "a", "name": "g", "input": {}}],
                     "line", [2]),
        MessageDraft("user", [{"type": "tool_result", "tool_use_id": "a", "content": "x"},
                              {"type": "text", "text": "and?"}], "line", [3]),
        MessageDraft("assistant", [{"type": "text", "text": "done"}], "line", [4])]
    assert _fast_equals_repairs(history)
    # each of these needs a repair (or a closer look), so the shortcut is not taken
    def draft(role, *blocks):
        return MessageDraft(role, list(blocks), "line", [1])

    def use(x):
        return {"type": "tool_use", "id": x, "name": "g", "input": {}}

    def result(x, content="out"):
        return {"type": "tool_result", "tool_use_id": x, "content": content}

    text, marked = {"type": "text", "text": "go"}, {"type": "image", "source": {
        "type": "url", "url": "u", "x": [{"cache_control": {"type": "ephemeral"}}] * 5}}
    for broken in ([history[0], history[1]],            # an unanswered tool_use at the end
                   [history[1], history[2]],            # starts with an assistant draft
                   [history[0], history[2]],            # an orphan tool_result
                   [history[0], history[0]],            # two user drafts in a row
                   # answered one exchange late: missing, then an orphan
                   [draft("user", text), draft("assistant", use("a")), draft("user", text),
                    draft("assistant", use("b")), draft("user", result("a"), result("b"))],
                   # the result after the user's text: moved first
                   [draft("user", text), draft("assistant", use("a")),
                    draft("user", text, result("a"))],
                   # five markers nested in a block: over the API's limit of four
                   [draft("user", text, marked)],
                   # a list content the API refuses
                   [draft("user", text), draft("assistant", use("a")),
                    draft("user", result("a", [{"type": "bogus"}]))]):
        assert not (blocks_valid(broken) and history_valid(broken))
        as_is = [{"role": d.role, "content": list(d.blocks)} for d in broken]
        try:
            repairs: list[str] = []
            clean_blocks(broken := copy.deepcopy(broken), repairs)
            messages = finish(broken, repairs, "x.jsonl")[0]
        except TranscriptError:
            continue
        assert repairs or messages != as_is  # a repair was needed (merging users is silent)


def test_generated_sessions_take_the_shortcut():
    # the explorer's usual input: every sample session loads without a repair, through the
    # two tests, to the same result as the full repairs
    for variant in range(6):
        text = sample_session_jsonl(12, variant=variant)
        drafts = claude_code.claude_code_drafts(claude_code.parse_jsonl(text, []), [], {},
                                                "restart")
        assert blocks_valid(drafts)
        joined = claude_code.join_split_responses(drafts)
        assert history_valid(joined)
        assert _fast_equals_repairs(joined)
        assert parse_text(text, name="s.jsonl").repairs == []


_SHAPED = st.one_of(_BLOCK, st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "tool_use", "tool_result", "thinking", "image"])},
    optional={"text": st.sampled_from(["a", " ", "", 3]), "id": st.sampled_from(["t1", "", 2]),
              "name": st.sampled_from(["g", None]), "input": st.sampled_from([{}, [], "x"]),
              "tool_use_id": st.sampled_from(["t1", None]),
              "content": st.sampled_from(["x", [], None]),
              "is_error": st.sampled_from([True, 0, None, {}]),
              "cache_control": st.sampled_from([None, {"type": "ephemeral"}]),
              "citations": st.just([])}))


@given(_SHAPED)
@settings(max_examples=800, deadline=None)
def test_the_usual_block_shapes_are_answered_as_any_block(block):
    # blocks_valid tells the three usual shapes by size and value types; its answer must be
    # the general per-block one (_block_valid), which the tests above hold to the repairs
    from mini_agent.core.transcripts.valid_drafts import _block_valid
    drafts = [MessageDraft("user", [block], "line", [1])]
    assert blocks_valid(drafts) == _block_valid(block, block.get("type"))


_COUNT = st.one_of(st.integers(-2, 5), st.none(), st.just(True), st.just(1.5), st.just("3"))


@given(st.one_of(st.none(), st.just([]), st.dictionaries(st.sampled_from(
    ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
     "service_tier"]), _COUNT), st.fixed_dictionaries(
    {k: st.integers(0, 9) for k in ("input_tokens", "output_tokens",
                                    "cache_creation_input_tokens", "cache_read_input_tokens")},
    optional={"cache_creation": st.sampled_from([None, {}, {"ephemeral_5m_input_tokens": -1},
                                                 {"ephemeral_1h_input_tokens": 2}]),
              "service_tier": st.just("standard")})))
@settings(max_examples=500, deadline=None)
def test_the_usual_usage_is_cleaned_as_clean_usage_cleans_it(usage):
    from mini_agent.core.pricing import clean_usage
    from mini_agent.core.transcripts.repair import _clean_usage
    assert _clean_usage(usage) == clean_usage(usage)
