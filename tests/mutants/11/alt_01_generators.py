"""ALTERNATIVE (correct, written differently): generators per block and str.find.

Exercise 11: count what a policy forgets (notebooks/11_evaluating_policies.ipynb).
"""

from __future__ import annotations


def _pieces(block):
    kind = block.get("type")
    if kind == "text":
        yield block["text"]
    elif kind == "thinking":
        yield block["thinking"]
    elif kind == "tool_use":
        yield block["name"]
        for key in block.get("input", {}):
            yield f"{key}: {block['input'][key]}"
    elif kind == "tool_result":
        content = block.get("content", "")
        yield content if isinstance(content, str) else "".join(
            part.get("text", "") for part in content if part.get("type") == "text")


def view_text(view):
    pieces = []
    for message in view:
        blocks = message["content"]
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]  # a new list: the message is untouched
        for block in blocks:
            pieces.extend(_pieces(block))
    return "\n".join(pieces)


def retained_facts(view, facts):
    text = view_text(view)
    kept = []
    for fact in facts:
        kept.append(len(fact.text) > 0 and text.find(fact.text) >= 0)
    return kept


def retention_curve(views, points, facts):
    if len(views) != len(points):
        raise ValueError("views and points must have the same length")
    return [(sum(1 for f, k in zip(due, retained_facts(v, due)) if k), len(due))
            for v, p in zip(views, points)
            for due in [[f for f in facts if f.message < p]]]
