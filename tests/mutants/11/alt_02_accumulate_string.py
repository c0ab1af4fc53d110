"""ALTERNATIVE (correct, written differently): one string built with separators, index loop.

Exercise 11: count what a policy forgets (notebooks/11_evaluating_policies.ipynb).
"""

from __future__ import annotations


def view_text(view):
    out = ""
    first = True
    for message in view:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            if block["type"] == "text":
                lines = [block["text"]]
            elif block["type"] == "thinking":
                lines = [block["thinking"]]
            elif block["type"] == "tool_use":
                lines = [block["name"]] + [k + ": " + str(v) for k, v in block["input"].items()]
            elif block["type"] == "tool_result":
                c = block.get("content", "")
                lines = [c if type(c) is str else
                         "".join(p["text"] for p in c if p["type"] == "text")]
            else:
                lines = []
            for line in lines:
                out += line if first else "\n" + line
                first = False
    return out


def retained_facts(view, facts):
    text = view_text(view)
    return [f.text != "" and f.text in text for f in facts]


def retention_curve(views, points, facts):
    if len(views) != len(points):
        raise ValueError(f"{len(views)} views, {len(points)} points")
    result = []
    for i in range(len(views)):
        due = [f for f in facts if f.message < points[i]]
        flags = retained_facts(views[i], due)
        result.append((flags.count(True), len(due)))
    return result
