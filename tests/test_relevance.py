"""Relevance: the identifiers a text names, and the quick test that an exchange shares one."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from mini_agent.core.relevance import (current_request_text, exchange_identifiers,
                                       exchange_texts, identifiers, shares_identifier)


def test_identifiers_are_paths_file_names_and_called_names():
    assert identifiers("Fix parse() in src/app.py, see notes.md and a.b") == {
        "parse", "src/app.py", "notes.md", "a.b"}
    assert identifiers(None) == set() and identifiers("") == set()


def test_exchange_texts_read_text_and_tool_inputs_not_results():
    ex = [{"role": "assistant", "content": [
              {"type": "text", "text": "Reading src/a.py"},
              {"type": "tool_use", "id": "t", "name": "read_file", "input": {"path": "é/b.py"}}]},
          {"role": "user", "content": [
              {"type": "tool_result", "tool_use_id": "t", "content": "src/hidden.py"}]}]
    assert exchange_texts(ex) == ["Reading src/a.py", '{"path": "é/b.py"}']
    assert exchange_identifiers(ex) == {"src/a.py", "é/b.py"}
    assert current_request_text([{"role": "user", "content": "go"}, *ex]) == "go"


WORD = st.text(alphabet="ab_./(-é1 \n\"", min_size=0, max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(WORD, max_size=4), st.lists(st.dictionaries(WORD, WORD, max_size=2), max_size=2),
       st.lists(WORD, max_size=3), st.lists(WORD, max_size=3))
def test_shares_identifier_equals_intersecting_all_identifiers(texts, inputs, request, extra):
    content = [{"type": "text", "text": t} for t in texts] + [
        {"type": "tool_use", "id": f"t{i}", "name": "x", "input": inp}
        for i, inp in enumerate(inputs)]
    ex = [{"role": "assistant", "content": content}]
    wanted = frozenset(identifiers(" ".join(request))) | frozenset(extra)
    assert shares_identifier(ex, wanted) == bool(wanted & exchange_identifiers(ex))
    # and with identifiers that are certainly present
    found = exchange_identifiers(ex)
    assert shares_identifier(ex, frozenset(list(found)[:1])) == bool(found)
