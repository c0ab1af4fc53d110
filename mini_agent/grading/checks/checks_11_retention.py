"""Graded checks for exercise 11 (the retention counter); ``impl`` is the module.

The same checks run against ``mini_agent.core.retention`` (the exercise functions are the
package's own). Typical mistakes caught: skipping tool inputs, thinking or list-shaped tool
results; joining pieces without a separator (a fact made up across two blocks) or with the
wrong one; loose matching (case, words, stripped spaces, NFKC or NFC folding, which exercise
09 taught for paths); counting an empty fact; counting facts not yet stated (``<=`` for
``<``), or all facts instead of those due; silently truncating mismatched lists; changing the
view in place.

Source: exercise 11 (``solutions/11_retention.py``) and its seed, lab 2 of
004_b74ef821c58ee4ec.txt (count the essential facts that stay exact in what is sent).
"""

from __future__ import annotations

import copy

from mini_agent.core.retention import Fact
from mini_agent.grading import check


def conversation():
    """Build a short conversation whose text sits in every kind of block.

    A user string (Japanese text), a thinking block, a text block, two tool_use inputs, a string
    tool_result and a list-shaped one whose text ``load_config(x)`` is split around an image.

    Returns:
        The messages.
    """
    return [
        {"role": "user", "content": "ポート番号は 8443 にしてください。Fix src/app.py"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "The rule: timeouts in UTC.", "signature": "s"},
            {"type": "text", "text": "Reading two files."},
            {"type": "tool_use", "id": "t1", "name": "read_file",
             "input": {"path": "src/app.py", "limit": 40}},
            {"type": "tool_use", "id": "t2", "name": "grep",
             "input": {"pattern": "load_config(", "path": "src"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "def main():\n    pass"},
            {"type": "tool_result", "tool_use_id": "t2", "content": [
                {"type": "text", "text": "src/cfg.py:3: load_"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": "iVBORw0KGgo="}},
                {"type": "text", "text": "config(x)"}]}]},
    ]


@check(points=3, hint="One piece per line in message order: string content, text, thinking, "
                      "the tool name then one 'key: value' line per input item, tool results.")
def check_view_text_pieces_and_order(impl):
    got = impl.view_text(conversation())
    expected = ("ポート番号は 8443 にしてください。Fix src/app.py\n"
                "The rule: timeouts in UTC.\nReading two files.\n"
                "read_file\npath: src/app.py\nlimit: 40\n"
                "grep\npattern: load_config(\npath: src\n"
                "def main():\n    pass\nsrc/cfg.py:3: load_config(x)")
    assert got == expected, f"expected {expected!r}, got {got!r}"


@check(points=1, hint="Blocks you do not read (images, redacted thinking) add nothing; an "
                      "empty view gives an empty string.")
def check_view_text_other_blocks(impl):
    view = [{"role": "user", "content": [
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
        {"type": "text", "text": "look"}]},
        {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "xyz"},
                                          {"type": "text", "text": "ok"}]}]
    assert impl.view_text(view) == "look\nok", impl.view_text(view)
    assert impl.view_text([]) == ""


@check(points=1, hint="Read the view, never change it (no normalising of content in place).")
def check_view_text_leaves_the_view_alone(impl):
    view = conversation()
    before = copy.deepcopy(view)
    impl.view_text(view)
    assert view == before, "the view was changed"


@check(points=3, hint="Exact substring of the whole view text: identifiers in tool inputs "
                      "count, list-shaped results are joined, non-ASCII text is compared as is.")
def check_retained_facts_exact(impl):
    facts = [Fact("8443", "number"), Fact("src/app.py", "identifier"),
             Fact("load_config(x)", "identifier"), Fact("timeouts in UTC", "decision"),
             Fact("ポート番号", "identifier"), Fact("9000", "number")]
    got = impl.retained_facts(conversation(), facts)
    assert got == [True, True, True, True, True, False], got


@check(points=2, hint="Character for character: no lower-casing, no word splitting, no "
                      "stripping of spaces.")
def check_retained_facts_is_strict(impl):
    facts = [Fact("8443ms", "number"), Fact("fix src/app.py", "identifier"),
             Fact("def main():\n    pass", "identifier"), Fact("def main(): pass", "identifier"),
             Fact("Reading two", "decision")]
    got = impl.retained_facts(conversation(), facts)
    assert got == [False, False, True, False, True], got


@check(points=1, hint="Exact is exact for Unicode too: do not fold with NFKC (full-width "
                      "８４４３ is not 8443) or normalise to NFC (e + U+0301 is not é); "
                      "compare the strings as they are.")
def check_retained_facts_no_unicode_folding(impl):
    view = [{"role": "user", "content": "ポート ８４４３ を開けて。cafe\u0301.md と ｓｒｃ/app.py"}]
    facts = [Fact("8443", "number"), Fact("８４４３", "number"), Fact("caf\u00e9.md", "identifier"),
             Fact("cafe\u0301.md", "identifier"), Fact("src/app.py", "identifier")]
    got = impl.retained_facts(view, facts)
    assert got == [False, True, False, True, False], got


@check(points=2, hint="Pieces are joined by a newline: a fact may not be made up of the end "
                      "of one block and the start of the next.")
def check_retained_facts_not_across_blocks(impl):
    view = [{"role": "user", "content": [{"type": "text", "text": "port 84"},
                                         {"type": "text", "text": "43 is open"}]}]
    facts = [Fact("8443", "number"), Fact("84 43", "number"), Fact("84\n43", "number")]
    assert impl.retained_facts(view, facts) == [False, False, True]


@check(points=1, hint="An empty fact text is never retained; the list is parallel to facts "
                      "(duplicates included) and facts are not changed.")
def check_retained_facts_edges(impl):
    facts = [Fact("", "number"), Fact("8443", "number"), Fact("8443", "number")]
    before = copy.deepcopy(facts)
    assert impl.retained_facts(conversation(), facts) == [False, True, True]
    assert facts == before
    assert impl.retained_facts(conversation(), []) == []


@check(points=1, hint="A masked or cleared tool result no longer holds its text.")
def check_retained_facts_after_masking(impl):
    view = conversation()
    view[2] = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1",
         "content": "[observation masked — 2 lines omitted]"},
        {"type": "tool_result", "tool_use_id": "t2",
         "content": "[Old tool result content cleared]"}]}
    facts = [Fact("def main()", "identifier"), Fact("load_config(x)", "identifier"),
             Fact("load_config(", "identifier")]
    assert impl.retained_facts(view, facts) == [False, False, True]


@check(points=3, hint="A fact counts at request r only once fact.message < points[r]; kept "
                      "counts those due facts still in views[r].")
def check_retention_curve(impl):
    full = conversation()
    masked = copy.deepcopy(full)
    masked[2]["content"][0]["content"] = "[observation masked — 2 lines omitted]"
    facts = [Fact("8443", "number", message=0), Fact("def main()", "identifier", message=2),
             Fact("load_config(x)", "identifier", message=2),
             Fact("timeouts in UTC", "decision", message=1)]
    views = [full[:1], full[:3], masked, masked[:1]]
    got = impl.retention_curve(views, [1, 2, 3, 3], facts)
    assert got == [(1, 1), (2, 2), (3, 4), (1, 4)], got
    got = [tuple(x) for x in impl.retention_curve([full], [3], [])]
    assert got == [(0, 0)], got


@check(points=1, hint="views and points must be parallel: raise ValueError, do not truncate.")
def check_retention_curve_length_mismatch(impl):
    try:
        impl.retention_curve([conversation()], [1, 3], [Fact("8443", "number")])
    except ValueError:
        return
    raise AssertionError("no ValueError for 1 view and 2 points")
