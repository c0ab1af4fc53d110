"""Every public function, method and module documents itself in one shape.

The shape (h11's): a one-line summary ending in a period; then, each on a line of its own,
``Args:`` naming every parameter, ``Returns:`` (or ``Yields:``) when something comes back,
``Raises:`` naming each exception the function raises itself, and a module's ``Source:``
(header alone or followed by the source) where the idea comes from. A run-on paragraph that
mentions the arguments in passing fails. Checked statically with ``ast``: nothing is imported.

Not covered: the planted demo project (``mini_agent/demo/``), whose files are the agent's
workspace; the graders' ``check_*`` functions, whose one-line docstring is what the scorecard
shows; private names (leading underscore) and dunder methods.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mini_agent"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "demo" not in p.relative_to(PACKAGE).parts)
SECTION = re.compile(r"^(Args|Returns|Yields|Raises|Example|Examples|Note|Notes|Attributes):\s*$"
                     r"|^(Source):(\s.*)?$")
EXEMPT_RAISES = {"NotImplementedError", "AssertionError"}


def _sections(doc: str) -> dict[str, list[str]]:
    """Return each ``Name:`` section of a docstring with its lines."""
    out: dict[str, list[str]] = {}
    current = None
    for line in doc.splitlines():
        match = SECTION.match(line.strip()) if not line.startswith((" ", "\t")) else None
        if match:
            current = match.group(1) or match.group(2)
            out[current] = [match.group(3) or ""] if match.group(2) else []
        elif current is not None:
            out[current].append(line)
    return out


def _raised_names(fn: ast.AST) -> set[str]:
    """Names of the exceptions a function's own body raises (not nested functions')."""
    names: set[str] = set()
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id[:1].isupper():
                names.add(exc.id)
            elif isinstance(exc, ast.Attribute):
                names.add(exc.attr)
        stack.extend(ast.iter_child_nodes(node))
    return names - EXEMPT_RAISES


def _returns_value(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    if fn.returns is None:
        return any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(fn))
    return not (isinstance(fn.returns, ast.Constant) and fn.returns.value is None) and \
        ast.unparse(fn.returns) not in ("None", "NoReturn", "Never")


def _is_check(path: Path, name: str) -> bool:
    return "checks" in path.parts and name.startswith("check_")


def problems(path: Path) -> list[str]:
    """Every docstring in ``path`` that is not in the shape, as ``line: name: what``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    module_doc = ast.get_docstring(tree)
    if not module_doc:
        found.append("1: module: no docstring")
    elif "Source" not in _sections(module_doc) and path.name != "__init__.py":
        found.append("1: module: no 'Source:' section on a line of its own")

    def visit(node: ast.AST, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef) and not child.name.startswith("_"):
                if not ast.get_docstring(child):
                    found.append(f"{child.lineno}: {child.name}: no docstring")
                visit(child, child.name + ".")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if child.name.startswith("_") or _is_check(path, child.name):
                    continue
                found.extend(_function_problems(child, owner))

    visit(tree, "")
    return found


def _function_problems(fn, owner: str) -> list[str]:
    where = f"{fn.lineno}: {owner}{fn.name}"
    doc = ast.get_docstring(fn)
    if not doc:
        return [f"{where}: no docstring"]
    out = []
    lines = doc.splitlines()
    if not lines[0].strip() or not lines[0].rstrip().endswith((".", ":", "?", "!", ")")):
        out.append(f"{where}: the first line is not a one-line summary")
    if len(lines) > 1 and lines[1].strip():
        out.append(f"{where}: no blank line after the summary")
    sections = _sections(doc)
    decorators = {ast.unparse(d) for d in fn.decorator_list}
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    params += [a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None]
    params = [p for p in params if p not in ("self", "cls")]
    if params and not decorators & {"property", "overload", "typing.overload"}:
        if "Args" not in sections:
            out.append(f"{where}: no 'Args:' section for {', '.join(params)}")
        else:
            text = "\n".join(sections["Args"])
            missing = [p for p in params
                       if not re.search(rf"^\s+\**{re.escape(p)}\b", text, re.M)]
            if missing:
                out.append(f"{where}: 'Args:' does not name {', '.join(missing)}")
    if _returns_value(fn) and "property" not in decorators and \
            not ({"Returns", "Yields"} & sections.keys()):
        out.append(f"{where}: no 'Returns:' section")
    raised = _raised_names(fn)
    if raised:
        text = "\n".join(sections.get("Raises", []))
        missing = sorted(n for n in raised if n not in text)
        if missing:
            out.append(f"{where}: 'Raises:' does not name {', '.join(missing)}")
    return out


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_docstrings_have_sections(path: Path) -> None:
    found = problems(path)
    assert not found, f"{path.relative_to(PACKAGE.parent)}:\n  " + "\n  ".join(found)


def test_the_checker_catches_a_run_on_docstring(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('"""A module.\n\nSource: here.\n"""\n\n'
                   'def f(a, b):\n    """Add a and b. Args: a, b. Returns the sum."""\n'
                   '    if a is None:\n        raise ValueError("a")\n    return a + b\n',
                   encoding="utf-8")
    good = tmp_path / "good.py"
    good.write_text('"""A module.\n\nSource:\n    here.\n"""\n\n'
                    'def f(a, b):\n    """Add two numbers.\n\n    Args:\n        a: first.\n'
                    '        b: second.\n\n    Returns:\n        The sum.\n\n    Raises:\n'
                    '        ValueError: a is None.\n    """\n'
                    '    if a is None:\n        raise ValueError("a")\n    return a + b\n',
                    encoding="utf-8")
    found = [p.split(": ", 2)[2] for p in problems(bad)]
    assert found == ["no 'Args:' section for a, b", "no 'Returns:' section",
                     "'Raises:' does not name ValueError"]
    assert problems(good) == []
