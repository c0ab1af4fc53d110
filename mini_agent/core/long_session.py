"""A long, deterministic coding session to compact, cache and tier: ``long_session(steps)``.

The episode 04 and 08 notebooks, the benchmarks and many tests need a realistic history
without real data: a task, then exchanges of reasoning + one tool call (read_file, grep,
run_bash, edit_file) and its result, with arrival times. Pure; nothing random.
Source: seed 004 (what a coding session's context is made of).
"""

from __future__ import annotations

from mini_agent.core.messages import Message, text_block

__all__ = ["long_session"]


_FILES = ("src/app.py", "src/parser.py", "src/tokenize.py", "src/config.py", "tests/test_app.py",
          "src/cli.py", "src/report.py", "README.md")
_FUNCS = ("parse", "tokenize", "load_config", "render", "main", "validate", "emit", "merge")


def _file_text(path: str, lines: int) -> str:
    stem = path.rsplit("/", 1)[-1].split(".")[0]
    return "\n".join(f"{n:4d}  def {stem}_{_FUNCS[n % len(_FUNCS)]}_{n}(x): return x + {n}"
                     for n in range(1, lines + 1))


def long_session(steps: int = 40, *, start_seconds: float = 1_767_225_600.0,
                 seconds_per_step: float = 120.0, task: str | None = None
                 ) -> tuple[list[Message], list[float]]:
    """Build a deterministic coding session of ``steps`` exchanges: ``(history, times)``.

    The task is to fix a failing ``parse()`` in ``src/parser.py``. Each exchange is one
    assistant message (reasoning text + one ``tool_use``: read_file of 60-220 lines, grep,
    run_bash running the tests, or edit_file) and the user message with its ``tool_result``;
    the last one is the assistant's closing text. The history validates; nothing random. Used by
    the episode 04 and 08 notebooks.

    Args:
        steps: exchanges in the session (>= 1; default 40).
        start_seconds: Unix time of the first message (default 2026-01-01T00:00Z).
        seconds_per_step: seconds between exchanges (default 120).
        task: the first user message; None uses the ``parse()`` bug report.

    Returns:
        ``(history, times)``: the messages and, parallel to them, the Unix seconds at which each
        arrived.

    Raises:
        ValueError: steps < 1.
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    task = task or ("The tests fail: parse() in src/parser.py returns None for empty input. "
                    "Find the cause and fix it without changing the public API of src/app.py.")
    history: list[Message] = [{"role": "user", "content": task}]
    times = [start_seconds]
    now = start_seconds
    for k in range(1, steps + 1):
        now += seconds_per_step
        path = _FILES[(k * 3) % len(_FILES)]
        func = _FUNCS[k % len(_FUNCS)]
        kind = ("read_file", "grep", "run_bash", "read_file", "edit_file")[k % 5]
        tid = f"toolu_{k:04d}"
        if kind == "read_file":
            lines = 60 + (k * 37) % 160
            text = f"I need to see how {func}() is used in {path}; I will read it."
            use = {"path": path}
            result = _file_text(path, lines)
        elif kind == "grep":
            text = f"Let me find every caller of {func}() before changing it."
            use = {"pattern": f"{func}(", "path": "src"}
            result = "\n".join(f"{_FILES[(k + j) % 6]}:{10 + j * 7}: y = {func}(x{j})"
                               for j in range(12))
        elif kind == "run_bash":
            text = "I will run the tests to see the current failure."
            use = {"command": "python -m pytest -q tests/test_app.py"}
            failing = k < steps * 0.8
            result = ("\n".join(f"tests/test_app.py::test_case_{j} PASSED" for j in range(20))
                      + ("\nFAILED tests/test_app.py::test_parse_empty - AssertionError: "
                         "parse('') returned None\n1 failed, 20 passed" if failing
                         else "\n21 passed"))
        else:
            text = (f"The bug is in {func}(): it returns early on empty input. I decided to "
                    f"return an empty list instead, because callers iterate over the result.")
            use = {"path": "src/parser.py", "old": "return None", "new": "return []"}
            result = "Edited src/parser.py: 1 replacement (line 42)."
        history.append({"role": "assistant", "content": [
            text_block(text), {"type": "tool_use", "id": tid, "name": kind, "input": use}]})
        times.append(now)
        now += 5.0
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid, "content": result}]})
        times.append(now)
    history.append({"role": "assistant", "content": [text_block(
        "Fixed: parse() in src/parser.py now returns [] for empty input; all 21 tests pass.")]})
    times.append(now + 30.0)
    return history, times
