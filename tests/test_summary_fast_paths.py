"""The offline summarisers skip work that cannot change their output: the same summaries as
reading every line and every block."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from mini_agent.core import prompt_summary as ps
from mini_agent.core.messages import tool_result_text
from mini_agent.core.structured_summary import (_ERROR_RE, _PATH_RE, _SYMBOL_RE, _short,
                                                structured_summary)

PIECES = ["error", "ERROR: x", "Not Found", "failed", "ok", "src/a.py", "b.md", "f()", "エラー",
          "\n", "\r\n", "\x0b", "\u2028", "\x85", " ", "x", "--", "."]
TEXT = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


def _history(texts, results):
    history = [{"role": "user", "content": "Fix it."}]
    for k, (text, result) in enumerate(zip(texts, results)):
        history += [{"role": "assistant", "content": [
                        {"type": "text", "text": text or "go"},
                        {"type": "tool_use", "id": f"t{k}", "name": "run", "input": {"c": text}}]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": f"t{k}", "content": result}]}]
    return history


def _problems_by_line(ms, newest):
    """The reference: every line of every result searched."""
    lines = []
    for m in ms:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == "tool_result":
                bad = [ln.strip() for ln in tool_result_text(b).splitlines()
                       if ps._ERROR_RE.search(ln)]
                lines += ["- " + ln for ln in (bad if newest is None else bad[:1])]
    lines = ps._unique(lines)
    return lines if newest is None else lines[-newest:]


def _identifiers_of_every_block(ms):
    """The reference: every block read, then the first 60 unique."""
    found = []
    for m in ms:
        for b in m["content"] if isinstance(m["content"], list) else [
                {"type": "text", "text": m["content"]}]:
            text = b.get("text") if b.get("type") == "text" else (
                tool_result_text(b) if b.get("type") == "tool_result" else
                " ".join(str(v) for v in (b.get("input") or {}).values())
                if b.get("type") == "tool_use" else "")
            found += _PATH_RE.findall(text or "") + _SYMBOL_RE.findall(text or "")
    return ["- " + i for i in ps._unique(found)[:60]]


@settings(max_examples=200, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=6), st.lists(TEXT, min_size=1, max_size=6))
def test_error_lines_equal_searching_every_line(texts, results):
    ms = _history(texts, results)
    for newest in (None, 6, 1):
        assert ps._problems(newest)(ms) == _problems_by_line(ms, newest)
    problems = structured_summary(ms).split("## Open problems\n")[1].split("\n## ")[0]
    expected = []
    for k, result in enumerate(results[:len(texts)]):
        bad = [ln for ln in result.splitlines() if _ERROR_RE.search(ln)]
        if bad:
            expected.append(f"- run {_short(texts[k], 60)}: {_short(bad[0], 160)}")
    # the first error line of each result, shortened (whitespace folded) as the summary does
    assert len(problems.splitlines()) == max(1, len(ps._unique(expected)[-6:]))


def test_identifiers_stop_at_sixty_with_the_same_sixty():
    names = [f"src/m{k}.py" for k in range(150)]
    texts = [" ".join(names[k:k + 7]) + f" call_{k}()" for k in range(0, 150, 7)]
    ms = _history(texts, [" ".join(reversed(names))] * len(texts))
    assert ps._identifiers(ms) == _identifiers_of_every_block(ms)
    assert len(ps._identifiers(ms)) == 60
    section = structured_summary(ms).split("## Identifiers\n")[1].split("\n## ")[0]
    firsts = []  # read in order: the text, the tool input (<= 120 chars), the result
    for text in [t for text in texts for t in (text, text, " ".join(reversed(names)))]:
        for ident in _PATH_RE.findall(text) + _SYMBOL_RE.findall(text):
            if ident not in firsts:
                firsts.append(ident)
    assert section.splitlines() == ["- " + i for i in firsts[:60]]
