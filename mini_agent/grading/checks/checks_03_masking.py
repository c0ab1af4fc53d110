"""Graded checks for exercise 03 (observation masking); ``impl`` is the module under test.

Each check targets one mistake learners make (seed 000's pitfalls and the issue's list):
masking the newest instead of the oldest, mutating the input, changing ``tool_use_id`` or
dropping ``is_error``, a wrong line count, touching user or assistant text, keep=0, keep
beyond the count, negative keep. Checks are independent: each builds its own history.
"""

from __future__ import annotations

import copy

from mini_agent.grading import check
from mini_agent.core.messages import validate_messages

PNG_1X1 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJ"
           "RU5ErkJggg==")


def lines(tag: str, n: int = 7) -> str:
    """A tool output of ``n`` lines (no trailing newline), distinct per tag."""
    return "\n".join(f"{tag} line {k}: some output that the model has already read"
                     for k in range(1, n + 1))


def history(outputs: list, *, user_text_after: str | None = None,
            is_error: bool = False) -> list[dict]:
    """A valid history: one user task, then one tool_use/tool_result exchange per output."""
    messages = [{"role": "user", "content": "Find and fix the failing test."}]
    for k, output in enumerate(outputs, 1):
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Let me look at step {k}."},
            {"type": "tool_use", "id": f"toolu_{k:02d}", "name": "read_file",
             "input": {"path": f"src/file_{k}.py"}}]})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{k:02d}", "content": output}
        if is_error:
            result["is_error"] = True
        content = [result]
        if user_text_after:
            content.append({"type": "text", "text": user_text_after})
        messages.append({"role": "user", "content": content})
    return messages


def results(messages: list[dict]) -> list[dict]:
    return [b for m in messages if isinstance(m["content"], list)
            for b in m["content"] if b["type"] == "tool_result"]


def placeholder(n: int) -> str:
    return f"[observation masked — {n} lines omitted]"


def is_placeholder(content) -> bool:
    """Any placeholder, whatever its line count (the count has its own check)."""
    return isinstance(content, str) and content.startswith("[observation masked")


def masked_count(messages: list[dict]) -> int:
    return sum(1 for b in results(messages) if is_placeholder(b["content"]))


def short(value, limit: int = 90) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def expect(got, expected, what: str) -> None:
    """Assert ``got == expected``; the failure says what was checked, expected and got (for
    two lists of the same length: at the first item that differs)."""
    if got == expected:
        return
    if isinstance(got, list) and isinstance(expected, list) and len(got) == len(expected) > 1:
        k = next(k for k, (a, b) in enumerate(zip(got, expected)) if a != b)
        what, got, expected = f"{what}, item {k}", got[k], expected[k]
    raise AssertionError(f"{what}: expected {short(expected)}, got {short(got)}")


# --------------------------------------------------------------------------- 03.1 approx_tokens

@check(points=1, hint="Count len() of string content and of text blocks, then round UP: "
                      "math.ceil(chars / 4).")
def check_approx_tokens_text(impl):
    expect(impl.approx_tokens([]), 0, "approx_tokens([])")
    expect(impl.approx_tokens([{"role": "user", "content": "hello"}]), 2,
           "approx_tokens of a 5-character string content")
    expect(impl.approx_tokens([{"role": "user", "content": "abcdefgh"}]), 2,
           "approx_tokens of an 8-character string content")
    expect(impl.approx_tokens([
        {"role": "user", "content": "abc"},
        {"role": "assistant", "content": [{"type": "text", "text": "defgh"},
                                          {"type": "text", "text": "i"}]}]), 3,
        "approx_tokens of 9 characters in a string and two text blocks")


@check(points=2, hint="A tool_use counts len(json.dumps(input)) + len(name) + 20; a "
                      "tool_result counts its string content, or the text parts of list content.")
def check_approx_tokens_tool_blocks(impl):
    use = [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.py"}}]}]
    expect(impl.approx_tokens(use), 12,  # '{"path": "a.py"}' 16 + 9 + 20 = 45 chars
           "approx_tokens of a read_file tool_use with input {'path': 'a.py'} (45 chars)")
    text_result = [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "x" * 41}]}]
    expect(impl.approx_tokens(text_result), 11,
           "approx_tokens of a tool_result with 41 characters of string content")
    list_result = [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "text", "text": "y" * 10},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": PNG_1X1}},
            {"type": "text", "text": "z" * 10}]}]}]
    expect(impl.approx_tokens(list_result), 5,  # 20 chars; the image part counts 0 here
           "approx_tokens of a tool_result list: 2 text parts of 10 characters and an image")


# --------------------------------------------------------------------------- 03.2 masking

@check(points=3, hint="The newest results live, the oldest die: walk the history from the "
                      "end and keep the first `keep` tool results you meet.")
def check_masks_oldest_keeps_newest(impl):
    outputs = [lines(tag) for tag in ("a", "b", "c", "d")]
    view = impl.mask_old_observations(history(outputs), keep=2)
    contents = [b["content"] for b in results(view)]
    masked = [is_placeholder(c) for c in contents]
    assert masked == [True, True, False, False] and contents[2:] == outputs[2:], (
        "4 results, keep=2: expected the 2 oldest masked and the 2 newest verbatim, got "
        f"masked (oldest first) {masked}")


@check(points=2, hint="N is the number of lines of the ORIGINAL text: text.count('\\n') + 1, "
                      "in '[observation masked — N lines omitted]' (an em dash).")
def check_placeholder_line_count(impl):
    outputs = [lines(tag, 12) for tag in ("a", "b", "c")]
    view = impl.mask_old_observations(history(outputs), keep=1)
    contents = [b["content"] for b in results(view)]
    assert contents.count(placeholder(12)) == 2, \
        f"12-line outputs, keep=1: expected {placeholder(12)!r} twice, got {short(contents[:2])}"
    view = impl.mask_old_observations(history(["one line only " * 5] * 2), keep=1)
    contents = [b["content"] for b in results(view)]
    assert placeholder(1) in contents, \
        f"a 1-line output: expected {placeholder(1)!r}, got {short(contents[0])}"


@check(points=2, hint="Build new lists and new dicts ({**block, 'content': ...}); never "
                      "assign into the input's messages or blocks.")
def check_does_not_mutate_input(impl):
    messages = history([lines(tag) for tag in ("a", "b", "c")])
    before = copy.deepcopy(messages)
    view = impl.mask_old_observations(messages, keep=1)
    expect(masked_count(view), 2, "3 results, keep=1: masked results")
    assert messages == before, ("mask_old_observations(messages, keep=1): expected the input "
                                "unchanged, got a changed input history")


@check(points=1, hint="Only the content changes: copy the block and keep its tool_use_id, "
                      "or the API rejects the result.")
def check_keeps_tool_use_id(impl):
    view = impl.mask_old_observations(history([lines(tag) for tag in "abc"]), keep=1)
    expect(masked_count(view), 2, "3 results, keep=1: masked results")
    expect([b.get("tool_use_id") for b in results(view)], ["toolu_01", "toolu_02", "toolu_03"],
           "tool_use_id of each result in the view")


@check(points=1, hint="A failed tool call must stay marked as failed: keep is_error on the "
                      "masked block.")
def check_keeps_is_error(impl):
    view = impl.mask_old_observations(history([lines("a"), lines("b")], is_error=True), keep=1)
    expect(masked_count(view), 1, "2 error results, keep=1: masked results")
    expect([b.get("is_error") for b in results(view)], [True, True],
           "is_error of each result in the view")


@check(points=1, hint="Never touch user text (a string content or a text block beside the "
                      "tool results): only tool_result blocks are observations.")
def check_user_text_untouched(impl):
    note = "Remember: the tests must pass on Python 3.11.\nAnd keep the public API."
    messages = history([lines("a"), lines("b"), lines("c")], user_text_after=note)
    view = impl.mask_old_observations(messages, keep=1)
    expect(masked_count(view), 2, "3 results, keep=1: masked results")
    expect(view[0], messages[0], "the first user message (the task)")
    expect([m["content"][1] for m in view[2::2]], [{"type": "text", "text": note}] * 3,
           "the user text blocks beside the tool results")


@check(points=1, hint="Never touch assistant messages: their text is the reasoning that "
                      "makes masking safe, and their tool_use blocks must stay paired.")
def check_assistant_untouched(impl):
    messages = history([lines("a"), lines("b"), lines("c")])
    view = impl.mask_old_observations(messages, keep=1)
    expect(masked_count(view), 2, "3 results, keep=1: masked results")
    expect(view[1::2], messages[1::2], "the assistant messages")


@check(points=1, hint="keep=0 means every tool result is masked. The usual cause of a miss: "
                      "positions[:-keep] is positions[:-0] == positions[:0], an empty list, so "
                      "nothing gets masked (a negative-slice pitfall); count from the front "
                      "with len(positions) - keep.")
def check_keep_zero_masks_all(impl):
    view = impl.mask_old_observations(history([lines(tag) for tag in "abc"]), keep=0)
    expect(len(results(view)), 3, "3 results, keep=0: results in the view")
    expect(masked_count(view), 3, "3 results, keep=0: masked results")


@check(points=1, hint="With keep >= the number of tool results nothing is masked (watch "
                      "negative slice indices).")
def check_keep_beyond_count(impl):
    messages = history([lines(tag) for tag in "abc"])
    for keep in (3, 5):
        view = impl.mask_old_observations(messages, keep=keep)
        expect(masked_count(view), 0, f"3 results, keep={keep}: masked results")
        assert view == messages, f"3 results, keep={keep}: expected the history unchanged"


@check(points=1, hint="Raise ValueError for a negative keep instead of guessing.")
def check_negative_keep_raises(impl):
    try:
        impl.mask_old_observations(history([lines("a")]), keep=-1)
    except ValueError:
        return
    raise AssertionError("keep=-1: expected ValueError, got a return value and no exception")


@check(points=1, hint="A tool_result content can be a list of blocks: join its text parts to "
                      "count lines; the whole list (images too) becomes the placeholder.")
def check_list_content(impl):
    output = [{"type": "text", "text": "first\nsecond"},
              {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                           "data": PNG_1X1}},
              {"type": "text", "text": "\nthird" + " padding" * 10}]
    view = impl.mask_old_observations(history([output, copy.deepcopy(output)]), keep=1)
    contents = [b["content"] for b in results(view)]
    assert placeholder(3) in contents, \
        f"a 3-line list content: expected {placeholder(3)!r}, got {short(contents[0])}"
    assert output in contents, \
        f"keep=1: expected the newest list content verbatim, got {short(contents[1])}"


@check(points=1, hint="The view must still be a valid API request: same messages, every "
                      "tool_use answered by its tool_result right after.")
def check_view_is_valid(impl):
    messages = history([lines(tag) for tag in "abcde"], user_text_after="Go on.")
    view = impl.mask_old_observations(messages, keep=2)
    expect(masked_count(view), 3, "5 results, keep=2: masked results")
    validate_messages(view)  # raises MessageValidationError naming the broken rule


# --------------------------------------------------------------------------- 03.3 trigger

@check(points=1, hint="Mask only when the estimate is strictly greater than the threshold.")
def check_should_mask_threshold(impl):
    messages = [{"role": "user", "content": "x" * 400}]  # 100 tokens
    expect(impl.should_mask(messages, threshold_tokens=99), True,
           "should_mask(~100 tokens, threshold_tokens=99)")
    expect(impl.should_mask(messages, threshold_tokens=100), False,
           "should_mask(~100 tokens, threshold_tokens=100)")
    expect(impl.should_mask(messages), False, "should_mask(~100 tokens) with the default 8,000")
    expect(impl.should_mask([{"role": "user", "content": "y" * 32_004}]), True,
           "should_mask(~8,001 tokens) with the default 8,000")
