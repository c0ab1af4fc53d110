"""How the demo brain reads its own work back from a view: what each of its calls was for,
which turn to continue, where the code lives, and whether a prompt asks for a fix.

The brain keeps no memory between requests, so everything here is read off the messages a
view still shows: its own ``tool_use`` inputs (never masked) and the results still visible.

Source:
    000_86e3ff2076a5ae37.txt (a masked view keeps the agent's own calls, so it can carry
    on); the kit's demo project (``mini_agent.demo``).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from mini_agent.offline.brain_kit import Call

ROUNDING_PATTERN = r"quantize|\bround\("
"""The grep for every place that rounds amounts (after a one-cent failure)."""


def purpose(call: Call) -> str:
    """Read back what the brain meant by one of its own tool calls.

    Args:
        call: one of the brain's calls, as the view shows it.

    Returns:
        ``"survey"``, ``"overview"``, ``"test"``, ``"locate"``, ``"verify"``,
        ``"read_tests"``, ``"inspect"``, ``"edit"`` or ``"other"``, from its name and input.
    """
    path = str(call.input.get("path", "."))
    if call.name == "list_dir":
        return "survey" if path in (".", "", "./") else "verify"
    if call.name == "glob" or (call.name == "read_file" and (
            path.lower().startswith("readme") or path == "run_tests.py")):
        return "overview"
    if call.name == "run_bash":
        return "test"
    if call.name == "grep":
        pattern = str(call.input.get("pattern", ""))
        return "locate" if pattern.startswith("def ") or pattern == ROUNDING_PATTERN else "verify"
    if call.name == "read_file":
        return "read_tests" if path.startswith("tests/") else "inspect"
    return "edit" if call.name == "edit_file" else "other"


def def_pattern(names: list[str]) -> str:
    """Build the grep pattern that finds where functions are defined.

    Args:
        names: the function names (from a failing test); may be empty.

    Returns:
        ``def (a|b)\\b``, or ``def test_`` when there are no names.
    """
    return f"def ({'|'.join(names)})\\b" if names else "def test_"


def package_of(calls: list[Call]) -> str | None:
    """Find the folder of the code under test from the paths the visible calls name.

    Args:
        calls: the calls the view still shows (edits, reads and grep hits are used).

    Returns:
        The first folder outside ``tests/``, or None when no call names one.
    """
    paths = [str(c.input.get("path", "")) for c in calls if c.name in ("edit_file", "read_file")]
    paths += [h for c in calls if c.name == "grep" and not c.is_error and not c.hidden
              for h in re.findall(r"^([^:\n]+):\d+:", c.result or "", re.M)]
    folders = [str(PurePosixPath(p).parent) for p in paths if p and not p.startswith("tests/")]
    return next((f for f in folders if f not in (".", "")), None)


def _same(a: Call, b: Call) -> bool:
    return a.name == b.name and a.input == b.input


def effective_turn(turns: list[list[Call]]) -> tuple[list[Call], bool]:
    """Pick the newest turn as the brain should read it.

    When the newest turn only repeats calls whose results the view hid in the turn before
    (the brain fetched them again), that earlier turn is returned with the fresh results in
    place of the hidden ones, so the step it was part of carries on.

    Args:
        turns: the brain's turns of calls, oldest first (at least one).

    Returns:
        ``(turn, fetched_again)``: the calls to continue from, and whether they were fetched
        again.
    """
    last = turns[-1]
    if len(turns) >= 2 and all(any(_same(c, h) and h.hidden for h in turns[-2]) for c in last):
        fresh = {(c.name, repr(sorted(c.input.items()))): c for c in last}
        return [fresh.get((c.name, repr(sorted(c.input.items()))), c) if c.hidden else c
                for c in turns[-2]], True
    return last, False


_FIX_REQUEST = re.compile(r"\b(fix|repair|make the tests pass|until it passes)\b", re.I)


def asks_for_a_fix(prompt: str) -> bool:
    """Tell whether a later prompt is a new task rather than a follow-up question.

    A prompt asking for a fix that is not a question starts the task ("Which file had the
    bug?" is a follow-up), so the demo task works after a greeting or any other exchange,
    and under a view that dropped the first prompt.

    Args:
        prompt: the user's text.

    Returns:
        True when it asks for a fix and does not end with a question mark.
    """
    return bool(_FIX_REQUEST.search(prompt)) and not prompt.rstrip().endswith("?")
