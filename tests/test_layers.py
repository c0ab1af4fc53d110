"""The layers are real: core is pure, harness never reaches offline or ui, offline never reaches
harness or ui.

Two proofs. Statically, every ``import`` in a layer (also those inside functions) is read from
the source, and every call that touches files or clocks in ``core/`` is named. At run time, each
module of a layer is imported in a fresh interpreter and the modules it loaded are compared with
what the layer forbids (``anthropic``, ``httpx2``, ``sqlite3``, ``subprocess``, widgets, another
layer), so a dependency hidden behind a re-export is caught too.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "mini_agent"
LAYERS = ("core", "harness", "offline", "ui")

FORBIDDEN_KIT = {
    "core": ("mini_agent.harness", "mini_agent.offline", "mini_agent.ui", "mini_agent.grading",
             "mini_agent.cli", "mini_agent.lab_cli"),
    "harness": ("mini_agent.offline", "mini_agent.ui", "mini_agent.grading", "mini_agent.cli",
                "mini_agent.lab_cli"),
    "offline": ("mini_agent.harness", "mini_agent.ui", "mini_agent.grading", "mini_agent.cli",
                "mini_agent.lab_cli"),
    "ui": ("mini_agent.cli", "mini_agent.lab_cli"),
}
"""Kit packages a layer may not import."""

WIDGETS = ("ipywidgets", "plotly", "IPython", "anywidget", "nbclient", "nbformat")
FORBIDDEN_OUTSIDE = {
    "core": ("anthropic", "httpx", "httpx2", "sqlite3", "subprocess", "socket", "threading",
             "asyncio", "concurrent", "multiprocessing", "time", "urllib.request", "http",
             "tempfile", "shutil", "signal", "os", *WIDGETS),
    "harness": WIDGETS,
    "offline": WIDGETS,
    "ui": (),
}
"""Outside modules a layer may not import directly (``core``: no IO of any kind)."""

CORE_IO_CALLS = {"open", "read_text", "read_bytes", "write_text", "write_bytes", "now", "today",
                 "utcnow", "time", "sleep", "getenv", "mkdir", "unlink", "iterdir", "glob"}
"""Calls that touch files, clocks or the environment: none may appear in ``core/``."""

RUNTIME_FORBIDDEN = {
    "core": ("anthropic", "httpx2", "httpx", "sqlite3", "subprocess", "ipywidgets", "plotly",
             "mini_agent.harness", "mini_agent.offline", "mini_agent.ui", "mini_agent.grading"),
    "harness": ("ipywidgets", "plotly", "mini_agent.offline", "mini_agent.ui"),
    "offline": ("ipywidgets", "plotly", "mini_agent.harness", "mini_agent.ui"),
}


def modules(layer: str) -> list[Path]:
    return sorted(p for p in (PACKAGE / layer).rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: relative import (use absolute)"
            found.append((node.lineno, node.module or ""))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def _hits(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


@pytest.mark.parametrize("layer", LAYERS)
def test_static_imports_point_downward_only(layer):
    bad = []
    for path in modules(layer):
        for line, name in imported_names(path):
            if name.startswith("mini_agent") and _hits(name, FORBIDDEN_KIT[layer]):
                bad.append(f"{path.relative_to(PACKAGE)}:{line} imports {name}")
            elif name.startswith("mini_agent") and not _hits(
                    name, ("mini_agent.core",) if layer == "core" else
                    tuple(f"mini_agent.{x}" for x in (*LAYERS, "demo", "hook_examples"))):
                bad.append(f"{path.relative_to(PACKAGE)}:{line} imports {name} (outside the layers)")
            elif _hits(name, FORBIDDEN_OUTSIDE[layer]):
                bad.append(f"{path.relative_to(PACKAGE)}:{line} imports {name}")
    assert not bad, f"{layer}/ breaks its layer rule:\n" + "\n".join(bad)


def test_core_calls_nothing_that_touches_files_clocks_or_the_environment():
    bad = []
    for path in modules("core"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                if name in CORE_IO_CALLS:
                    bad.append(f"{path.relative_to(PACKAGE)}:{node.lineno} calls {name}()")
    assert not bad, "core/ must be pure:\n" + "\n".join(bad)


_PROBE = """
import importlib, json, sys
before = set(sys.modules)
out = {}
for name in sys.argv[1:]:
    start = set(sys.modules)
    importlib.import_module(name)
    out[name] = sorted(set(sys.modules) - start)
print(json.dumps(out))
"""


@pytest.mark.parametrize("layer", ["core", "harness", "offline"])
def test_each_module_imported_alone_loads_nothing_its_layer_forbids(layer):
    """Each module in a fresh interpreter; the modules it loaded are checked against the rule."""
    names = [module_name(p) for p in modules(layer)]
    bad = []
    # one interpreter per module, run a few at a time (the import, not the start-up, is tested)
    procs = []
    for name in names:
        procs.append((name, subprocess.Popen([sys.executable, "-c", _PROBE, name],
                                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                             text=True, cwd=PACKAGE.parent)))
        if len(procs) >= 4:
            bad += _collect(procs.pop(0), layer)
    for item in procs:
        bad += _collect(item, layer)
    assert not bad, f"{layer}/ modules load what the layer forbids:\n" + "\n".join(bad)


def _collect(item, layer):
    name, proc = item
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, f"importing {name} failed:\n{err}"
    loaded = json.loads(out)[name]
    return [f"{name} loads {m}" for m in loaded if _hits(m, RUNTIME_FORBIDDEN[layer])][:3]


def test_the_probe_sees_a_forbidden_import():
    """The runtime check is not vacuous: importing the offline transport loads the SDK."""
    proc = subprocess.run([sys.executable, "-c", _PROBE, "mini_agent.offline.transport"],
                          capture_output=True, text=True, cwd=PACKAGE.parent, check=True)
    loaded = json.loads(proc.stdout)["mini_agent.offline.transport"]
    assert "anthropic" in loaded and "httpx2" in loaded
