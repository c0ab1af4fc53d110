"""MUTANT (wrong on purpose): Normalises text and facts to NFC before matching; exposed by a fact café (NFC) counted kept in a view that spells it cafe + U+0301 (NFD).

Exercise 11: count what a policy forgets (notebooks/11_evaluating_policies.ipynb).

A policy that sends 70% fewer tokens must say what it dropped. Each conversation comes with its
essential facts (decisions, open problems, identifiers, numbers); a fact is kept by a view
when its exact text still appears in what the model would read. Build the counter, in order:

* 11.1 ``view_text(view)``: every string the model reads in a view, one per line;
* 11.2 ``retained_facts(view, facts)``: for each fact, whether its exact text is in the view;
* 11.3 ``retention_curve(views, points, facts)``: per request, facts kept of those stated so far.

Messages are plain Anthropic ``MessageParam`` dicts, oldest first::

    {"role": "user" | "assistant", "content": str | list[block]}
    {"type": "text", "text": str}
    {"type": "thinking", "thinking": str, "signature": str}
    {"type": "tool_use", "id": str, "name": str, "input": dict}
    {"type": "tool_result", "tool_use_id": str, "content": str | list[block]}

A fact is any object with a ``text`` (str) and a ``message`` (int: index of the first message
that states it), like ``mini_agent.core.retention.Fact``. Grade with ``mini-agent grade 11``.
The kit's own version is ``mini_agent.core.retention``; read it after you pass, not before.
"""

from __future__ import annotations


def view_text(view: list[dict]) -> str:
    """Every string a model would read in ``view``: text, thinking, tool inputs and results.

    In message order, block by block, one piece per line (joined with ``"\\n"``): a string
    content; a text block's ``text``; a thinking block's ``thinking``; a tool_use block's
    ``name`` then one ``"key: value"`` line per input item (in the input's order); a
    tool_result's content when it is a string, else its text parts joined with no separator
    (image parts add nothing). Other blocks add nothing. The view is not mutated.
    Returns: str. Example: ``view_text([{"role": "user", "content": "fix src/app.py"}]) ==
    "fix src/app.py"``.
    Source: lab 2 of the course chapter on context, memory and state (seed 004; see
    docs/sources.md in the kit): how many essential facts survive a summary.
    """
    parts = []
    for message in view:
        content = message["content"]
        if isinstance(content, str):
            parts.append(content)
            continue
        for block in content:
            kind = block.get("type")
            if kind == "text":
                parts.append(block["text"])
            elif kind == "thinking":
                parts.append(block["thinking"])
            elif kind == "tool_use":
                parts.append(block["name"])
                parts += [f"{key}: {value}" for key, value in block.get("input", {}).items()]
            elif kind == "tool_result":
                result = block.get("content", "")
                if isinstance(result, str):
                    parts.append(result)
                else:
                    parts.append("".join(p["text"] for p in result if p.get("type") == "text"))
    return "\n".join(parts)


def retained_facts(view: list[dict], facts: list) -> list[bool]:
    """For each fact, whether its exact ``text`` appears in ``view_text(view)``.

    Exact means character for character: "8443ms" is not "8443 ms". A fact with an empty
    text is never retained. Returns a list of bools parallel to ``facts``; nothing is mutated.
    Example: a view saying "port 8443" keeps a fact "8443" and loses a fact "9000".
    Source: lab 2 of the course chapter on context, memory and state (seed 004; see
    docs/sources.md in the kit): count the facts that stay exact.
    """
    import unicodedata
    text = unicodedata.normalize("NFC", view_text(view))
    return [bool(fact.text) and unicodedata.normalize("NFC", fact.text) in text
            for fact in facts]


def retention_curve(views: list[list[dict]], points: list[int], facts: list
                    ) -> list[tuple[int, int]]:
    """``(kept, introduced)`` per request: facts kept by each view, of those stated so far.

    ``views[r]`` is what request r sent and ``points[r]`` the length of the history it saw; a
    fact counts at request r once ``fact.message < points[r]`` (stated in a message the
    request saw); ``kept`` counts those still retained by ``views[r]``.
    Returns: a list of ``(kept, introduced)`` tuples parallel to ``views``.
    Raises: ValueError when ``views`` and ``points`` differ in length.
    """
    if len(views) != len(points):
        raise ValueError(f"{len(views)} views but {len(points)} points")
    out = []
    for view, point in zip(views, points):
        due = [fact for fact in facts if fact.message < point]
        out.append((sum(retained_facts(view, due)), len(due)))
    return out
