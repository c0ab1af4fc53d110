"""Resuming a log whose entries hold more ``cache_control`` markers than a request may carry
(mini_agent.core.session_entries.rebuild_history): the history loads, its markers removed
with a note; a history within the API's marker rules keeps its markers."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from mini_agent.core.cache import place_breakpoints, strip_cache_control
from mini_agent.core.messages import validate_messages
from mini_agent.core.session_entries import history_to_entries, rebuild_history
from mini_agent.core.wire_rules import cache_markers
from strategies import histories

FIVE = {"type": "ephemeral"}
HOUR = {"type": "ephemeral", "ttl": "1h"}


def marked(text, marker=FIVE):
    return {"type": "text", "text": text, "cache_control": marker}


def turns(count, marker=FIVE):
    """``count`` exchanges, each user message marked (a writer marking every turn)."""
    history = []
    for k in range(count):
        history += [{"role": "user", "content": [marked(f"question {k}", marker)]},
                    {"role": "assistant", "content": [{"type": "text", "text": f"answer {k}"}]}]
    return history


def test_six_marked_turns_resume_without_markers_and_say_so():
    history = turns(6)
    entries = history_to_entries(history)
    before = copy.deepcopy(entries)
    rebuilt, times, report = rebuild_history(entries)
    assert entries == before                              # the entries are not touched
    assert len(rebuilt) == 12 and len(times) == 12
    assert cache_markers(rebuilt) == []
    assert rebuilt == strip_cache_control(history)        # nothing but the markers changed
    assert rebuilt[10]["content"][0]["text"] == "question 5"
    (note,) = report.notes
    assert note.startswith("removed all 6 cache_control markers of the history "
                           "(messages 0, 2, 4, 6, 8, 10)") and "at most 4" in note
    # the resumed history is a request the API takes, with the kit's own breakpoints too
    request = place_breakpoints({"model": "m", "messages": rebuilt, "system": "You code.",
                                 "tools": [{"name": "t", "input_schema": {}}]})
    validate_messages(request["messages"], system=request["system"], tools=request["tools"])


def test_four_markers_are_within_the_rule_and_kept():
    history = turns(4)
    rebuilt, _, report = rebuild_history(history_to_entries(history))
    assert rebuilt == history and len(cache_markers(rebuilt)) == 4
    assert report.notes == []


def test_one_message_with_five_markers_is_kept_not_skipped():
    # valid alone but for the count: the message's text must survive the resume
    message = {"role": "user", "content": [marked(f"part {k}") for k in range(5)]}
    rebuilt, _, report = rebuild_history([{"type": "message", "message": message}])
    assert [b["text"] for b in rebuilt[0]["content"]] == [f"part {k}" for k in range(5)]
    assert cache_markers(rebuilt) == []
    assert len(report.notes) == 1 and "removed all 5" in report.notes[0]
    assert not any("skipped" in n for n in report.notes)


def test_markers_inside_tool_results_count_and_are_removed():
    use = {"type": "tool_use", "id": "t1", "name": "read_file", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "t1", "cache_control": FIVE,
              "content": [marked("line 1"), marked("line 2")]}
    history = turns(2) + [{"role": "user", "content": [marked("go on")]},
                          {"role": "assistant", "content": [use]},
                          {"role": "user", "content": [result]}]
    rebuilt, _, report = rebuild_history(history_to_entries(history))
    assert cache_markers(rebuilt) == []                    # 2 + 1 + 3 nested = 6
    assert "removed all 6" in report.notes[0] and "messages 0, 2, 4, 6" in report.notes[0]
    assert rebuilt[-1]["content"][0]["content"][1] == {"type": "text", "text": "line 2"}


def test_an_hour_marker_after_a_five_minute_one_is_removed_too():
    history = turns(1, FIVE) + turns(1, HOUR)
    rebuilt, _, report = rebuild_history(history_to_entries(history))
    assert rebuilt == strip_cache_control(history)
    assert "ttl='1h' marker came after a ttl='5m'" in report.notes[0]
    ordered = turns(1, HOUR) + turns(1, FIVE)            # longer first: the API takes it
    assert rebuild_history(history_to_entries(ordered))[0] == ordered


def test_a_marker_of_the_wrong_shape_still_skips_its_entry():
    bad = {"role": "user", "content": [marked("hi", {"type": "persistent"})]}
    rebuilt, _, report = rebuild_history([{"type": "message", "message": bad}])
    assert rebuilt == [] and "the API would refuse" in report.notes[0]


def _ttl_order_broken(markers):
    ttls = [m.get("ttl", "5m") for m in markers]
    return any(a == "5m" and b == "1h" for k, a in enumerate(ttls) for b in ttls[k + 1:])


@settings(max_examples=60, deadline=None)
@given(histories(min_turns=1, max_turns=6), st.data())
def test_any_marked_history_resumes_valid_and_loses_nothing_but_markers(history, data):
    spots = [(i, j) for i, m in enumerate(history) if isinstance(m["content"], list)
             for j, _ in enumerate(m["content"])]
    chosen = data.draw(st.lists(st.sampled_from(spots), unique=True, max_size=10)) \
        if spots else []
    for i, j in chosen:
        content = list(history[i]["content"])
        content[j] = {**content[j], "cache_control": data.draw(st.sampled_from([FIVE, HOUR]))}
        history[i] = {**history[i], "content": content}
    rebuilt, _, report = rebuild_history(history_to_entries(history))
    validate_messages(rebuilt, request=False)
    markers = cache_markers(history)
    if len(markers) > 4 or _ttl_order_broken(markers):
        assert rebuilt == strip_cache_control(history)
        assert report.notes == [n for n in report.notes if n.startswith("removed all")] and \
            f"removed all {len(markers)} " in report.notes[0]
    else:
        assert rebuilt == history and report.notes == []
