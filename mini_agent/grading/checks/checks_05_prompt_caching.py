"""Graded checks for exercise 05 (prompt caching); ``impl`` is the module under test.

The same checks run against the package (``from mini_agent import ...``): the exercise's
names are the kit's own. Typical mistakes caught: a fingerprint that depends on tool order,
key order or markers, or that misses a change (names only, non-ASCII text lost by an
``encode("ascii", ...)``); sorting the caller's tools or popping their markers in place;
hashing the dynamic part of the system prompt or a stripped static part; OR instead of AND on
the two thresholds, ``>=`` instead of ``>``, a ratio against the new read or in whole percents;
a detector that compares with the first or the largest read instead of the previous one,
keeps the fingerprints of its first request, or reuses a request it already checked;
breakpoints that keep old markers, land on an empty text block or a thinking block, on the
first of several tool results, on a tool other than the last one given, or that reorder the
tools or mutate the request.

Source: exercise 05 (``solutions/05_prompt_caching.py``) and its seed, section 4 of
002_4516104fd432e704.txt (``CacheBreakDetector``: fingerprints recorded before the request,
a break when the cache read drops, its causes named); Anthropic's prompt caching docs
(``cache_control`` breakpoints).
"""

from __future__ import annotations

import copy
import hashlib

from mini_agent.grading import check
from mini_agent.grading.checks._caching_cases import (
    BOUNDARY, MARKER, SAME_TOOLS_OTHER_BYTES, SYSTEM, TOOLS, changes, marker_paths, markers,
    names, request, short, strip)
from mini_agent.grading.checks._report import InputChanged


# --------------------------------------------------------------------------- fingerprints

@check(points=2, hint="Canonical means: the same tool set gives the same text whatever the "
                      "order of the tools, the order of the keys or the markers on it.")
def check_tools_fingerprint_is_canonical(impl):
    a = impl.tools_fingerprint(copy.deepcopy(TOOLS))
    assert isinstance(a, str) and len(a) == 64 and a == a.lower() and int(a, 16) >= 0, \
        f"tools_fingerprint(TOOLS): expected a SHA-256 hex digest (64 hex digits), got {short(a)}"
    b = impl.tools_fingerprint(copy.deepcopy(SAME_TOOLS_OTHER_BYTES))
    assert a == b, ("the same two tools in another order, with keys in another order and a "
                    f"cache_control marker: expected the same fingerprint {a[:12]}..., "
                    f"got {short(b)}")
    one = [{"name": "t", "description": "x", "input_schema": {"type": "object"}}]
    marked = [dict(one[0], cache_control={"type": "ephemeral", "ttl": "1h"})]
    assert impl.tools_fingerprint(one) == impl.tools_fingerprint(marked), \
        "a tool with a 1h cache_control marker: expected the fingerprint of the unmarked tool"


@check(points=2, hint="Every byte of a tool's content counts: description, schema, "
                      "non-ASCII text. Only order and markers are not content.")
def check_tools_fingerprint_sees_every_change(impl):
    base = impl.tools_fingerprint(copy.deepcopy(TOOLS))
    changes = {
        "description of read_file changed": [dict(TOOLS[0], description="Read a whole file"),
                                             TOOLS[1]],
        "a schema property renamed": [dict(TOOLS[0], input_schema={
            "type": "object", "properties": {"file": {"type": "string"}}}), TOOLS[1]],
        "one tool dropped": [TOOLS[0]],
    }
    for what, tools in changes.items():
        got = impl.tools_fingerprint(copy.deepcopy(tools))
        assert got != base, f"{what}: expected another fingerprint, got the same {got[:12]}..."
    read = [{"name": "read", "description": "ファイルを読む", "input_schema": {"type": "object"}}]
    write = [{"name": "read", "description": "ファイルを書く", "input_schema": {"type": "object"}}]
    assert impl.tools_fingerprint(read) != impl.tools_fingerprint(write), \
        "descriptions 'ファイルを読む' vs 'ファイルを書く': expected two fingerprints, got one"


@check(points=1, hint="Work on a copy: the caller's list keeps its order and its markers.",
       guards_input=True)
def check_tools_fingerprint_leaves_tools_alone(impl):
    tools = [dict(TOOLS[0], cache_control={"type": "ephemeral"}), copy.deepcopy(TOOLS[1])]
    before = copy.deepcopy(tools)  # read_file (marked), grep: not in name order
    impl.tools_fingerprint(tools)
    if tools != before:
        raise InputChanged(f"tools_fingerprint({names(before)}): expected the list passed in "
                           f"unchanged, got {names(tools)} after the call", "tools")


@check(points=2, hint="Hash exactly the text before the first boundary (the whole prompt "
                      "when there is none), as UTF-8, nothing trimmed.")
def check_system_fingerprint_static_part(impl):
    static = "You are careful."
    expected = hashlib.sha256(static.encode("utf-8")).hexdigest()
    for system in (static + BOUNDARY + "time 10:00", static + BOUNDARY + "time 10:01",
                   static, static + BOUNDARY + "cwd /a" + BOUNDARY + "x"):
        got = impl.system_fingerprint(system)
        assert got == expected, (f"system_fingerprint({short(system, 70)}): expected "
                                 f"sha256({static!r}) = {expected[:12]}..., got {short(got)}")
    pairs = [("Rules.\n" + BOUNDARY + "t", "Rules." + BOUNDARY + "t"),
             ("規則：慎重に。" + BOUNDARY + "t", "規則：大胆に。" + BOUNDARY + "t"),
             ("Rules." + BOUNDARY + "t", "Other rules." + BOUNDARY + "t")]
    for one, other in pairs:
        assert impl.system_fingerprint(one) != impl.system_fingerprint(other), \
            (f"static parts {short(one.split(BOUNDARY)[0])} and "
             f"{short(other.split(BOUNDARY)[0])}: expected two fingerprints, got one")


# --------------------------------------------------------------------------- break detector

def run_detector(impl, steps):
    """Feed requests and their responses to a new detector.

    Args:
        impl: the implementation under test.
        steps: ``[(system, tools, cache_read_input_tokens), ...]``, one per request; each
            response also reports 10 uncached input tokens.

    Returns:
        What ``check_response`` gave after each request, in order.
    """
    det = impl.CacheBreakDetector()
    out = []
    for system, tools, read in steps:
        det.record_request(system, copy.deepcopy(tools))
        out.append(det.check_response({"cache_read_input_tokens": read, "input_tokens": 10}))
    return out


def pair(impl, first_read, second_read, *, system2=SYSTEM, tools2=TOOLS):
    """Run two requests through a new detector and return the second one's report.

    Args:
        impl: the implementation under test.
        first_read: the first response's ``cache_read_input_tokens``.
        second_read: the second response's ``cache_read_input_tokens``.
        system2: the second request's system prompt (default: unchanged, :data:`SYSTEM`).
        tools2: the second request's tools (default: unchanged, :data:`TOOLS`).

    Returns:
        The second ``check_response`` result (None or a break report).
    """
    return run_detector(impl, [(SYSTEM, TOOLS, first_read), (system2, tools2, second_read)])[1]


def causes(report) -> set:
    """Read a break report's causes as a set (the order was never promised).

    Args:
        report: a break report with a ``causes`` list.

    Returns:
        The causes.
    """
    return set(report["causes"])


@check(points=2, hint="A break needs BOTH: a drop of more than 2,000 tokens AND of more than "
                      "5% of the previous read; strictly more, in exact arithmetic.")
def check_break_thresholds(impl):
    for first, second, why in ((1_000, 0, "a 1,000-token drop (100%)"),
                               (100_000, 97_000, "a 3% drop (3,000 tokens)"),
                               (40_000, 38_000, "exactly 2,000 tokens and exactly 5%"),
                               (50_000, 47_500, "exactly 5% (2,500 tokens)"),
                               (10_000, 12_000, "a read that grows")):
        got = pair(impl, first, second)
        assert got is None, f"reads {first} then {second}, {why}: expected None, got {short(got)}"
    for first, second in ((40_000, 37_999), (41_000, 38_949)):
        got = pair(impl, first, second)
        assert got is not None and got["dropped_tokens"] == first - second, \
            (f"reads {first} then {second} (more than 2,000 and more than 5%): expected a break "
             f"with dropped_tokens={first - second}, got {short(got)}")


@check(points=2, hint="Compare the fingerprints of this request with those of the previous "
                      "one; 'unknown' only when neither changed. The causes are a set: "
                      "their order is free.")
def check_break_causes(impl):
    changed = [TOOLS[0], dict(TOOLS[1], description="Search files")]
    cases = [("nothing changed", {}, {"unknown"}),
             ("static system part changed", {"system2": "New rules." + BOUNDARY + "x"},
              {"system_prompt_changed"}),
             ("only the dynamic part changed", {"system2": "You are careful." + BOUNDARY +
                                                "time 11:00"}, {"unknown"}),
             ("a tool description changed", {"tools2": changed}, {"tools_changed"}),
             ("same tools, other order and key order", {"tools2": SAME_TOOLS_OTHER_BYTES},
              {"unknown"}),
             ("both changed", {"system2": "新しい規則。" + BOUNDARY, "tools2": changed},
              {"system_prompt_changed", "tools_changed"})]
    for what, kwargs, expected in cases:
        got = pair(impl, 50_000, 0, **kwargs)
        assert got is not None and causes(got) == expected, \
            f"read 50,000 then 0, {what}: expected causes {sorted(expected)}, got {short(got)}"
        assert len(got["causes"]) == len(expected), f"{what}: a cause listed twice: {got}"


@check(points=2, hint="After every response, this response becomes the previous one: its "
                      "read AND its fingerprints, whether it was a break or not.")
def check_detector_over_many_steps(impl):
    slow = run_detector(impl, [(SYSTEM, TOOLS, r) for r in (100_000, 97_000, 94_100, 91_300)])
    assert slow == [None] * 4, ("reads 100,000 -> 97,000 -> 94,100 -> 91,300 (each step under "
                                f"5%): expected no break, got {short(slow)}")
    reads = (50_000, 10_000, 10_000, 60_000, 0)
    got = run_detector(impl, [(SYSTEM, TOOLS, r) for r in reads])
    kinds = [None if g is None else g["dropped_tokens"] for g in got]
    assert kinds == [None, 40_000, None, None, 60_000], \
        f"reads {reads}: expected dropped_tokens [None, 40000, None, None, 60000], got {kinds}"
    new = "New rules." + BOUNDARY
    got = run_detector(impl, [(SYSTEM, TOOLS, 10_000), (new, TOOLS, 50_000), (new, TOOLS, 0)])
    assert got[1] is None and got[2] is not None and causes(got[2]) == {"unknown"}, \
        ("system A (read 10,000), system B (50,000), system B again (0): the third request "
         f"changed nothing since the second; expected causes ['unknown'], got {short(got[2])}")
    changed = [TOOLS[0], dict(TOOLS[1], description="Search files")]
    got = run_detector(impl, [(SYSTEM, TOOLS, 50_000), (SYSTEM, changed, 50_000),
                              (SYSTEM, changed, 0)])
    assert got[2] is not None and causes(got[2]) == {"unknown"}, \
        ("tools T (50,000), tools T' (50,000), tools T' again (0): expected causes "
         f"['unknown'], got {short(got[2])}")


@check(points=1, hint="check_response compares the request recorded just before it: with "
                      "none recorded (or one already checked), there is nothing to compare.")
def check_detector_needs_a_recorded_request(impl):
    det = impl.CacheBreakDetector()
    got = det.check_response({"cache_read_input_tokens": 10})
    assert got is None, f"check_response before any record_request: expected None, got {got}"
    det = impl.CacheBreakDetector()
    det.record_request(SYSTEM, copy.deepcopy(TOOLS))
    first = det.check_response({"cache_read_input_tokens": 0})
    assert first is None, f"the first response ever (read 0): expected None, got {short(first)}"
    det.record_request(SYSTEM, copy.deepcopy(TOOLS))
    det.check_response({"cache_read_input_tokens": 50_000})
    again = det.check_response({"cache_read_input_tokens": 0})
    assert again is None, ("record, check (50,000), check again (0) without a new record: "
                           f"expected None, got {short(again)}")


# --------------------------------------------------------------------------- breakpoints

def placed(impl, req, expected_paths, what):
    """Run ``place_breakpoints`` on ``req`` and check where its markers land.

    The input must be unchanged, markers exactly at ``expected_paths``, each
    ``{"type": "ephemeral"}``, and nothing else changed.

    Args:
        impl: the implementation under test.
        req: the request to mark.
        expected_paths: the marker paths (:func:`marker_paths`) the output must have.
        what: the input, described briefly for a failure message.

    Returns:
        The marked request.

    Raises:
        AssertionError: the call raised, or marked other places.
        InputChanged: the call changed ``req`` (an AssertionError).
    """
    before = copy.deepcopy(req)
    try:
        out = impl.place_breakpoints(req)
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - shown with the input that raised it
        raise AssertionError(f"{what}: expected markers at {expected_paths}, got "
                             f"{type(exc).__name__}: {exc}") from exc
    if req != before:
        raise InputChanged(f"{what}: expected the request passed in unchanged, got "
                           f"{changes(before, req)} after the call", "the request")
    got = marker_paths(out)
    assert sorted(got) == sorted(expected_paths), \
        f"{what}: expected markers at {expected_paths}, got {got}"
    assert all(m in (MARKER, dict(MARKER, ttl="5m")) for m in markers(out)), \
        f"{what}: expected every marker to be {MARKER}, got {short(markers(out))}"
    return out


@check(points=2, hint="Remove the old markers, then mark three places: the last tool, the end "
                      "of the static system part, the last block of the last message that may "
                      "carry one.")
def check_breakpoints_placed(impl):
    out = placed(impl, request(), ["tools[1]", "system[0]", "messages[2].content[0]"],
                 "old markers on tools[0], system[0] ('Rules.', before 'now: 10:00'), "
                 "messages[0]; last message ['fix it', '   ']")
    assert strip(out) == strip(request()), \
        (f"tools {names(TOOLS)}, system, 3 messages: expected the same request apart from the "
         f"markers, got {changes(strip(request()), strip(out))}")


@check(points=1, hint="A system block the caller marked ends the static part: that marker "
                      "stays (the last one, if there are several); with none, mark the last "
                      "system block.")
def check_breakpoints_system_marker(impl):
    def system(*marked):
        return [dict({"type": "text", "text": t}, **({"cache_control": {"type": "ephemeral"}}
                                                      if t in marked else {}))
                for t in ("Rules.", "Project notes.", "now: 10:00")]
    messages = [{"role": "user", "content": "go"}]
    for marked, expected in ((("Rules.", "Project notes."), "system[1]"), ((), "system[2]"),
                             (("Rules.",), "system[0]")):
        req = {"system": system(*marked), "messages": messages}
        placed(impl, req, [expected, "messages[0].content[0]"],
               f"system ['Rules.', 'Project notes.', 'now: 10:00'], marked {list(marked)}")


@check(points=1, hint="The last tool is the last one of the list as given; keep the tools in "
                      "their order (sorting is for fingerprints only).")
def check_breakpoints_keep_tool_order(impl):
    req = {"tools": copy.deepcopy(SAME_TOOLS_OTHER_BYTES) + [
        {"name": "edit_file", "description": "Edit", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "go"}]}
    out = placed(impl, req, ["tools[2]", "messages[0].content[0]"],
                 "tools [grep, read_file (marked), edit_file]")
    names = [t["name"] for t in out["tools"]]
    assert names == ["grep", "read_file", "edit_file"], \
        f"tools [grep, read_file, edit_file]: expected the same order, got {names}"


@check(points=2, hint="The marker goes on the LAST block of the last message that may carry "
                      "one: not a thinking block, not a text of nothing but whitespace; a "
                      "tool_result carries it itself, whatever its content holds.")
def check_breakpoints_last_message_shapes(impl):
    results = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "a\nb"},
        {"type": "tool_result", "tool_use_id": "t2", "content": [
            {"type": "text", "text": "see image"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "iVBORw0KGgo="}}]}]}
    uses = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
        {"type": "tool_use", "id": "t2", "name": "screenshot", "input": {}}]}
    req = {"messages": [{"role": "user", "content": "look"}, uses, results]}
    placed(impl, req, ["messages[2].content[1]"],
           "last message = two tool_results (the second with text+image content)")
    prefill = {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "hm", "signature": "s"}, {"type": "text", "text": " \n"}]}
    req = {"system": [{"type": "text", "text": "S"}],
           "messages": [{"role": "user", "content": "go"}, prefill]}
    placed(impl, req, ["system[0]"], "last message = [thinking, whitespace text]")
    req = {"tools": [], "messages": [{"role": "user", "content": [
        {"type": "text", "text": "日本語のテキスト"},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
        {"type": "text", "text": "\t"}]}]}
    placed(impl, req, ["messages[0].content[1]"], "tools=[]; last message [text, image, '\\t']")


@check(points=1, hint="String content becomes one text block carrying the marker; parts of "
                      "the request that are absent stay absent.")
def check_breakpoints_on_string_content(impl):
    req = {"messages": [{"role": "user", "content": "hello"},
                        {"role": "assistant", "content": "hi"},
                        {"role": "user", "content": "ポートは 8443"}]}
    out = placed(impl, req, ["messages[2].content[0]"], "three string messages")
    expected = [{"type": "text", "text": "ポートは 8443", "cache_control": MARKER}]
    assert strip(out["messages"][2]["content"]) == strip(expected), \
        f"last message 'ポートは 8443': expected {expected}, got {short(out['messages'][2])}"
    assert out["messages"][:2] == req["messages"][:2], \
        f"earlier messages must stay as they were, got {short(out['messages'][:2])}"
    assert "tools" not in out and "system" not in out, \
        f"no tools or system in the request: expected none in the copy, got {sorted(out)}"


@check(points=1, hint="The API refuses cache_control on an empty text block: the system marker "
                      "goes on the last non-empty block at or before the end of the static "
                      "part (never after it), and empty string content gets no block at all.")
def check_breakpoints_never_on_empty_text(impl):
    go = [{"role": "user", "content": "go"}]
    req = {"system": [{"type": "text", "text": "Rules."}, {"type": "text", "text": " \n"}],
           "messages": go}
    placed(impl, req, ["system[0]", "messages[0].content[0]"],
           "system ['Rules.', ' \\n'], no marker given")
    req = {"system": [{"type": "text", "text": "Rules."},
                      {"type": "text", "text": "  ", "cache_control": dict(MARKER)},
                      {"type": "text", "text": "now: 10:00"}], "messages": go}
    placed(impl, req, ["system[0]", "messages[0].content[0]"],
           "system ['Rules.', '  ' (marked), 'now: 10:00']")
    req = {"messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": ""}]}
    out = placed(impl, req, [], "last message: an assistant prefill with content ''")
    assert out["messages"] == req["messages"], \
        f"content '' must stay '', got {short(out['messages'][-1])}"
