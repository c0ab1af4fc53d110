"""Graded checks for exercise 03 (observation masking); ``impl`` is the module under test.

The same checks run against the package (``from mini_agent import approx_tokens,
mask_old_observations, should_mask``). Typical mistakes caught: the estimate floored, in UTF-8
bytes, with ASCII-escaped or ``str()`` JSON, without the tool_use framing, with list-shaped
results stringified, thinking or images left out, image tokens added before the rounding;
masking the newest instead of the oldest; counting results per message or walking the blocks
of one message in the wrong order (several results share one user message); ``keep=0``
masking nothing; mutating the input; dropping ``is_error`` or other keys; the line count off
by one, from ``splitlines()`` (a trailing newline, U+2028) or from list parts joined with a
newline; crashing on a user message with string content; ``should_mask`` with ``>=`` or
ignoring ``threshold_tokens``. Outputs are longer than the placeholder throughout (the kit's
own version leaves shorter ones alone, which the exercise does not ask).

Source: exercise 03 (``solutions/03_masking.py``) and its seed, 000_86e3ff2076a5ae37.txt
(``maskOldObservations`` keep=4, the placeholder ``[observation masked — N lines omitted]``,
``approxTokens`` characters/4, the 8,000-token trigger).
"""

from __future__ import annotations

from mini_agent import MessageValidationError, validate_messages
from mini_agent.grading import check
from mini_agent.grading.checks._masking_cases import (
    BUSY_PLACEHOLDERS, IMAGE_100x60, OUT_C, OUT_D, OUT_E, PAD, assistant, busy_history, history,
    lines, placeholder, result_contents, text, tool_use, user)
from mini_agent.grading.checks._report import (
    called, expect, expect_raises, returns, snapshot, unchanged)


def masked(impl, messages, what, **kwargs):
    """Call ``mask_old_observations(messages, **kwargs)``; fail if the input was changed.

    Args:
        impl: the implementation under test.
        messages: the history to mask.
        what: the input, described briefly for a failure message.
        kwargs: passed on (``keep``).

    Returns:
        The view the learner's function returned.

    Raises:
        AssertionError: the call raised, or changed ``messages``.
    """
    before = snapshot(messages)
    view = called(lambda: impl.mask_old_observations(messages, **kwargs), what)
    unchanged(before, messages, what=what, names=("messages",))
    return view


def tokens(impl, messages, expected, what):
    """Assert ``approx_tokens(messages) == expected`` and that the input was not changed.

    Args:
        impl: the implementation under test.
        messages: the history to estimate.
        expected: the estimate the seed's rule gives (tokens).
        what: the input, described briefly for a failure message.

    Raises:
        AssertionError: another value came back, the call raised, or it changed ``messages``.
    """
    before = snapshot(messages)
    returns(lambda: impl.approx_tokens(messages), expected, f"approx_tokens({what})")
    unchanged(before, messages, what=f"approx_tokens({what})", names=("messages",))


# --------------------------------------------------------------------------- 03.1 approx_tokens

@check(points=1, hint="Count characters (len of a str, not its UTF-8 bytes) of string content "
                      "and text blocks, then round UP the characters / 4.")
def check_approx_tokens_text(impl):
    tokens(impl, [], 0, "[]")
    tokens(impl, [{"role": "user", "content": "hello"}], 2, "5-character string content")
    tokens(impl, [{"role": "user", "content": "abcdefgh"}], 2, "8-character string content")
    tokens(impl, [{"role": "user", "content": "abc"}, assistant(text("defgh"), text("i"))], 3,
           "'abc', then text blocks 'defgh' and 'i'")
    tokens(impl, [{"role": "user", "content": "ポート番号は 8443 にしてください。"}], 5,
           "'ポート番号は 8443 にしてください。' (20 characters)")


@check(points=2, hint="A tool_use counts its name, the JSON of its input as the seed's "
                      "JSON.stringify writes it (non-ASCII kept as it is, quotes escaped) and 20.")
def check_approx_tokens_tool_use(impl):
    tokens(impl, [assistant(tool_use("read_file", {"path": "a.py"}))], 12,
           "read_file {'path': 'a.py'}: 45 characters")
    tokens(impl, [assistant(tool_use("edit_file", {"path": "docs/設計.md", "new": "完了"}))], 16,
           "edit_file {'path': 'docs/設計.md', 'new': '完了'}: 64 characters")
    tokens(impl, [assistant(tool_use("grep", {"pattern": 'say "hi" or "bye"', "path": "src"}))],
           19, "grep {'pattern': 'say \"hi\" or \"bye\"', 'path': 'src'}: 75 characters")
    tokens(impl, [assistant(text("Two calls."), tool_use("read_file", {"path": "a.py"}, "t1"),
                            tool_use("edit_file", {"path": "docs/設計.md", "new": "完了"}, "t2"))],
           30, "'Two calls.', read_file a.py, edit_file 設計.md: 10 + 45 + 64 characters")


@check(points=2, hint="A tool_result counts its string content, or each part of its list "
                      "content (text parts by length, image parts by image_tokens); no content "
                      "counts 0.")
def check_approx_tokens_tool_result(impl):
    tokens(impl, [user({"type": "tool_result", "tool_use_id": "t1", "content": "x" * 41})], 11,
           "a tool_result of 41 characters")
    listed = {"type": "tool_result", "tool_use_id": "t2",
              "content": [text("y" * 10), IMAGE_100x60, text("z" * 10)]}
    tokens(impl, [user(listed)], 13, "a tool_result [10 chars, 100x60 image, 10 chars]: 5 + 8")
    tokens(impl, [user({"type": "tool_result", "tool_use_id": "t1", "content": "x" * 41,
                        "is_error": True}, listed,
                       {"type": "tool_result", "tool_use_id": "t3"})], 24,
           "3 tool_results (41 chars; [10 chars, image, 10 chars]; no content): 16 + 8")


@check(points=1, hint="Thinking text counts like text; an image adds its image_tokens AFTER "
                      "the characters were divided by 4 and rounded up.")
def check_approx_tokens_thinking_and_images(impl):
    tokens(impl, [assistant({"type": "thinking", "thinking": "Let me think.", "signature": "s"},
                            text("ok"))], 4, "thinking 'Let me think.' and text 'ok'")
    tokens(impl, [assistant({"type": "redacted_thinking", "data": "abcd" * 5}, text("ok"))], 6,
           "redacted_thinking of 20 characters of data and text 'ok'")
    tokens(impl, [user(text("see"), IMAGE_100x60)], 9, "'see' and a 100x60 image: 1 + 8")


# --------------------------------------------------------------------------- 03.2 masking

@check(points=3, hint="The newest results live, the oldest die: count the results from the "
                      "end of the history, block by block.")
def check_masks_oldest_keeps_newest(impl):
    outputs = [lines(tag, 7) for tag in "abcd"]
    view = masked(impl, history(outputs), "4 results, keep=2", keep=2)
    got = [b["content"] for m in view if isinstance(m["content"], list)
           for b in m["content"] if b["type"] == "tool_result"]
    expect(got, [placeholder(7), placeholder(7), outputs[2], outputs[3]],
           "results of mask_old_observations(4 results of 7 lines, keep=2)")


@check(points=2, hint="Several results can share one user message: count every tool_result "
                      "block, and inside a message the later block is the newer one.")
def check_several_results_in_one_message(impl):
    p = BUSY_PLACEHOLDERS
    for keep, expected in [(2, [p[0], p[1], p[2], OUT_D, OUT_E]),
                           (3, [p[0], p[1], OUT_C, OUT_D, OUT_E]),
                           (1, [p[0], p[1], p[2], p[3], OUT_E])]:
        view = masked(impl, busy_history(), f"results A..E, B-D in one message, keep={keep}",
                      keep=keep)
        expect(result_contents(view), expected,
               f"results A..E (B, C, D in one message), keep={keep}")


@check(points=2, hint="N counts the lines of the ORIGINAL text, and only '\\n' ends a line: "
                      "a trailing newline starts one more (empty) line, U+2028 and '\\r' end "
                      "none. The dash is an em dash.")
def check_placeholder_line_count(impl):
    cases = [(lines("a", 12), 12), ("one line only" + PAD, 1),
             ("line 1\nline 2\n" + PAD + "\n", 4),
             ("項目1\u2028項目2\r\n項目3" + PAD, 2)]
    outputs = [output for output, _ in cases] + ["newest" + PAD]
    view = masked(impl, history(outputs), "5 results, keep=1", keep=1)
    got = [view[2 * k]["content"][0]["content"] for k in range(1, len(cases) + 1)]
    for (output, n), content in zip(cases, got):
        expect(content, placeholder(n), f"the placeholder of {output[:24]!r}...")


@check(points=1, hint="List content: join the TEXT parts with '' to count lines; the whole "
                      "list, image included, becomes the placeholder.")
def check_list_content(impl):
    view = masked(impl, busy_history(), "results A..E, keep=1", keep=1)
    expect(view[4]["content"][2]["content"], placeholder(3),
           "result D [text 'd line 1\\nd line 2...', image, text '\\nd line 3'], keep=1")
    view = masked(impl, busy_history(), "results A..E, keep=2", keep=2)
    expect(view[4]["content"][2]["content"], OUT_D, "result D (kept: 2nd newest), keep=2")


@check(points=2, hint="Build new lists and new dicts ({**block, 'content': ...}); never "
                      "assign into the input's messages or blocks.", guards_input=True)
def check_does_not_mutate_input(impl):
    messages = busy_history()
    view = masked(impl, messages, "results A..E, keep=1", keep=1)
    expect(len(view), len(messages), "len(view) for 9 messages")
    masked(impl, history([lines(t, 5) for t in "abc"]), "3 results, keep=0", keep=0)


@check(points=1, hint="Only the content changes: keep tool_use_id, is_error and any other key "
                      "of the block (the API pairs results by id).")
def check_keeps_every_key(impl):
    messages = history([lines("a", 5), lines("b", 5)], is_error=True)
    messages[2]["content"][0]["cache_control"] = {"type": "ephemeral"}
    view = masked(impl, messages, "2 error results, keep=1", keep=1)
    expect(view[2]["content"][0], {"type": "tool_result", "tool_use_id": "toolu_01",
                                   "content": placeholder(5), "is_error": True,
                                   "cache_control": {"type": "ephemeral"}},
           "the masked result (is_error, cache_control), keep=1")
    expect(view[4]["content"][0]["is_error"], True, "is_error of the kept result")


@check(points=1, hint="Only tool_result blocks are observations: assistant messages, user "
                      "text (string content or text blocks) and the order of blocks stay.")
def check_everything_else_untouched(impl):
    messages = busy_history()
    view = masked(impl, messages, "results A..E, keep=0", keep=0)
    expect(len(view), len(messages), "len(view), keep=0")
    for i, (old, new) in enumerate(zip(messages, view)):
        if isinstance(old["content"], str) or old["role"] == "assistant":
            expect(new, old, f"message {i} ({old['role']}, no tool_result), keep=0")
            continue
        expect([b["type"] for b in new["content"]], [b["type"] for b in old["content"]],
               f"block types of message {i}, keep=0")
        expect([b for b in new["content"] if b["type"] != "tool_result"],
               [b for b in old["content"] if b["type"] != "tool_result"],
               f"non-result blocks of message {i}, keep=0")


@check(points=1, hint="keep=0 means every tool result is masked: mind what a slice does with "
                      "-0.")
def check_keep_zero_masks_all(impl):
    view = masked(impl, busy_history(), "results A..E, keep=0", keep=0)
    expect(result_contents(view), BUSY_PLACEHOLDERS, "results A..E, keep=0")


@check(points=1, hint="With keep >= the number of results nothing is masked, and the view is "
                      "still a new list (mind negative slice indices).")
def check_keep_beyond_count(impl):
    messages = busy_history()
    for keep in (5, 6, 50):
        view = masked(impl, messages, f"5 results, keep={keep}", keep=keep)
        expect(view, messages, f"mask_old_observations(5 results, keep={keep})")
        assert view is not messages, (f"mask_old_observations(5 results, keep={keep}): expected "
                                      "a new list, got the input list itself")


@check(points=1, hint="The default keep is 4 (the seed's KEEP_RECENT_OBSERVATIONS).")
def check_default_keep(impl):
    outputs = [lines(tag, 2) for tag in "abcdef"]
    view = masked(impl, history(outputs), "6 results, default keep")
    got = [view[2 * k]["content"][0]["content"] for k in range(1, 7)]
    expect(got, [placeholder(2)] * 2 + outputs[2:], "6 results, default keep")


@check(points=1, hint="Raise ValueError for a negative keep instead of guessing.")
def check_negative_keep_raises(impl):
    for keep in (-1, -3):
        expect_raises(ValueError, lambda: impl.mask_old_observations(busy_history(), keep=keep),
                      f"mask_old_observations(5 results, keep={keep})")


@check(points=1, hint="The view must still be a valid API request: same messages, every "
                      "tool_use answered by its tool_result right after.")
def check_view_is_valid(impl):
    for keep in (0, 2, 4):
        view = masked(impl, busy_history(), f"keep={keep}", keep=keep)
        try:
            validate_messages(view)
        except MessageValidationError as exc:
            raise AssertionError(f"mask_old_observations(results A..E, keep={keep}): expected "
                                 f"a valid request, got {exc}") from None


# --------------------------------------------------------------------------- 03.3 trigger

@check(points=1, hint="Mask only when the estimate is strictly greater than threshold_tokens; "
                      "use the threshold you are given.")
def check_should_mask_threshold(impl):
    messages = [{"role": "user", "content": "x" * 400}]  # 100 tokens
    for threshold, expected in [(99, True), (100, False), (101, False), (0, True)]:
        returns(lambda: impl.should_mask(messages, threshold_tokens=threshold), expected,
                f"should_mask(~100 tokens, threshold_tokens={threshold})")
    returns(lambda: impl.should_mask(messages), False, "should_mask(~100 tokens), default 8,000")
    big = [{"role": "user", "content": "y" * 32_004}]  # 8,001 tokens
    returns(lambda: impl.should_mask(big), True, "should_mask(~8,001 tokens), default 8,000")
    returns(lambda: impl.should_mask([{"role": "user", "content": "y" * 32_000}]), False,
            "should_mask(~8,000 tokens), default 8,000")
    returns(lambda: impl.should_mask([user(text("see"), IMAGE_100x60)], threshold_tokens=8),
            True, "should_mask('see' + a 100x60 image: 9 tokens, threshold_tokens=8)")
