"""What the demo brain says at the end of the task and after it: its summary, then answers.

:func:`fix_summary` writes the task's closing summary (the fixes, the callers checked).

Once the demo task is done, the user may ask more: "what is in money.py?", "run the tests
again", "what did you change?". :func:`follow_up` answers from the tool calls in the request,
and when the observation it needs was masked (notebook 03) it reads the file again, as a model
would. Stateless like the brain: everything comes from the request. Does not: answer
questions about anything but the workspace's files, its tests and the brain's own edits.
Taught in ``notebooks/03_observation_masking.ipynb``.

Source:
    000_86e3ff2076a5ae37.txt (after masking, the model still answered questions about earlier
    files; store the full history so a masked read can be shown again).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from mini_agent.offline.brain_kit import Call, Reply, act, numbered_lines, plural, say, use
from mini_agent.offline.demo_bugs import (DEFAULT_TEST_COMMAND, FIXED_PATTERN,
                                          parse_test_report, recipe_for_fixed_line,
                                          recipe_for_line)


def follow_up(prompt: str, segment: list[Call], earlier: list[Call], *,
              cut: bool = False) -> Reply:
    """Answer a question asked after the task: about a file, the tests or the changes made.

    A file the question names is described from its newest unmasked read (read again when
    that observation was masked); "run the tests" runs them and reports the count; a question
    about changes lists the edits; anything else gets what the brain can answer.

    Args:
        prompt: the question.
        segment: the tool calls made since the question was asked.
        earlier: the tool calls made before it (the task's).
        cut: the view dropped the early conversation (``context_collapse``,
            ``auto_compact``); a question about the changes whose edits are out of view is
            then answered from the code (a grep for the fixed lines), since some of the
            edits may be out of view.

    Returns:
        The next reply.
    """
    everything = earlier + segment
    known = list(dict.fromkeys(str(c.input["path"]) for c in everything
                               if c.name in ("read_file", "edit_file") and "path" in c.input))
    lower = prompt.lower()
    mentioned = next((p for p in sorted(known, key=len, reverse=True)
                      if p.lower() in lower or PurePosixPath(p).name.lower() in lower), None)
    if mentioned is None:
        m = re.search(r"[\w./-]+\.(?:py|md|txt|csv)\b", prompt)
        mentioned = m.group(0) if m else None
    if mentioned:
        read = next((c for c in reversed(everything) if c.name == "read_file"
                     and c.input.get("path") == mentioned and numbered_lines(c.result)
                     and "offset" not in c.input), None)
        if read is None:
            before = any(c.name == "read_file" and c.input.get("path") == mentioned
                         for c in everything)
            text = (f"My earlier read of `{mentioned}` is no longer in my context (its "
                    "observation was masked), so I'll read it again." if before
                    else f"I haven't read `{mentioned}` yet; reading it.")
            if any(c.input.get("path") == mentioned and c.is_error for c in segment):
                return say(f"I could not read `{mentioned}`: "
                           f"{next(c.result for c in segment if c.is_error)}")
            return act(text, use("read_file", path=mentioned))
        return say(describe_file(mentioned, numbered_lines(read.result), prompt, everything))
    if re.search(r"\b(run|rerun)\b.*\btests?\b", lower):
        run = next((c for c in reversed(segment) if c.name == "run_bash"), None)
        if run is None:
            command = next((c.input["command"] for c in reversed(everything)
                            if c.name == "run_bash"), DEFAULT_TEST_COMMAND)
            return act("Running the test suite.", use("run_bash", command=command))
        report = parse_test_report(run.result or "")
        if report is None:
            return say(f"The test command gave no report:\n\n{run.result}")
        return say(f"{report.passed} of {report.ran} tests pass"
                   + (" - the suite is green." if report.ok else "; see the report above."))
    if cut and re.search(r"chang|fix|edit|diff|bug|wrong", lower):  # some edits out of view
        return _changes_from_code(segment)
    edits = [c for c in everything if c.name == "edit_file" and not c.is_error]
    if edits and re.search(r"chang|fix|edit|diff|bug|wrong", lower):
        rows = [f"- `{c.input['path']}`: `{c.input['old_string'].strip()}` -> "
                f"`{c.input['new_string'].strip()}`" for c in edits]
        return say("I changed these lines (each file kept a `.bak` backup):\n"
                   + "\n".join(rows))
    files = ", ".join(f"`{p}`" for p in known[:8]) or "none yet"
    return say("I can answer questions about the files of this workspace, re-run the tests, "
               f"or explain the changes I made. Files I have read: {files}.")


def _changes_from_code(segment: list[Call]) -> Reply:
    """The edits are out of view: grep the code for the fixed lines, then answer from the hits."""
    grep = next((c for c in reversed(segment) if c.name == "grep"
                 and c.input.get("pattern") == FIXED_PATTERN and not c.hidden), None)
    if grep is None:
        return act("The early conversation is out of my context, so I'll look for the fixed "
                   "lines in the code.", use("grep", pattern=FIXED_PATTERN, path=".", glob="*.py"))
    rows = []
    for path, number, code in re.findall(r"^([^:\n]+):(\d+):(.*)$", grep.result or "", re.M):
        recipe = recipe_for_fixed_line(code)
        if recipe and not path.startswith("tests/"):
            rows.append(f"- `{path}` line {number} (`{recipe.function}`): `{code.strip()}`: "
                        f"{recipe.title}")
    if not rows:
        return say("The early conversation is out of my context, and the code shows none of "
                   "the fixes I know.")
    return say("The early conversation is out of my context, so I read my changes off the "
               "code: these lines are fixed (each changed file kept a `.bak` backup):\n"
               + "\n".join(rows))


def describe_file(path: str, lines: dict[int, str], prompt: str, calls: list[Call]) -> str:
    """Answer a question about a file from its (unmasked) read_file observation.

    Args:
        path: the file's path relative to the workspace.
        lines: the observation as ``{line_number: text}``.
        prompt: the question; a top-level function or class it names is described alone.
        calls: the tool calls so far; the newest successful edit of the file is mentioned.

    Returns:
        A few lines of Markdown: the named definition's lines and docstring, or the file's
        length, first line and its definitions (sections for a ``.md`` file).
    """
    defs = [(n, m.group(1), m.group(2)) for n, line in sorted(lines.items())
            if (m := re.match(r"^(def|class) (\w+)", line))]
    asked = next((d for d in defs if re.search(rf"\b{d[2]}\b", prompt)), None)
    if asked:
        end = next((n - 1 for n, _, _ in defs if n > asked[0]), max(lines))
        doc = next((lines[n].strip().strip('"') for n in range(asked[0] + 1, end + 1)
                    if lines.get(n, "").strip().startswith('"""')), "")
        return (f"`{asked[2]}` is a {'function' if asked[1] == 'def' else 'class'} in `{path}`, "
                f"lines {asked[0]}-{end}. Its docstring says: {doc or '(none)'}")
    first = next((lines[n].strip().strip('"') for n in sorted(lines) if lines[n].strip()), "")
    if path.endswith(".md"):
        heads = [f"{line.lstrip('#').strip()} (line {n})" for n, line in sorted(lines.items())
                 if line.startswith("## ")]
        listing = "has sections " + (", ".join(heads) or "(none)")
    else:
        listing = ("defines " + ", ".join(f"`{name}` (line {n})" for n, _, name in defs)
                   if defs else "has no top-level functions or classes")
    text = f"`{path}` has {len(lines)} lines. It opens with: {first}\nIt {listing}."
    edits = [c for c in calls if c.name == "edit_file" and not c.is_error
             and c.input.get("path") == path]
    if edits:
        text += (f"\nI edited it: `{edits[-1].input['old_string'].strip()}` became "
                 f"`{edits[-1].input['new_string'].strip()}`.")
    return text


def fix_summary(calls: list[Call], turn: list[Call]) -> Reply:
    """Write the demo task's closing summary: the fixes, the callers checked, the backups.

    Args:
        calls: every call the view still shows, oldest first.
        turn: the newest turn's calls (the verification greps and the listing).

    Returns:
        The final ``end_turn`` reply. When the edits are out of view, the fixes are read
        off the code (the grep for the fixed lines) instead of off the edits.
    """
    found = next((c for c in turn if c.name == "grep" and not c.is_error
                  and c.input.get("pattern") == FIXED_PATTERN), None)
    runs = [parse_test_report(c.result or "") for c in calls if c.name == "run_bash"]
    ran = next((r.ran for r in reversed(runs) if r and r.ok), None)
    parts = [f"All {ran} tests pass." if ran else "The test suite passes."]
    if found is not None:
        edits = []
        fixed = []
        for path, number, code in re.findall(r"^([^:\n]+):(\d+):(.*)$", found.result or "",
                                              re.M):
            recipe = recipe_for_fixed_line(code)
            if recipe and not path.startswith("tests/"):
                fixed.append(f"**{recipe.title[0].upper() + recipe.title[1:]}** "
                             f"(`{path}`, `{recipe.function}`): line {number} now reads "
                             f"`{code.strip()}`. {recipe.why}")
        lost = ("Some of my edits are" if any(c.name == "edit_file" for c in calls)
                else "My edits are")
        parts.append(f"{lost} no longer in my context, so I read the fixes off the code:"
                     if fixed else f"{lost} no longer in my context, and the code shows "
                     "none of the fixes I know.")
    else:
        edits = [c for c in calls if c.name == "edit_file" and not c.is_error]
        fixed = []
        for c in edits:
            line = c.input["old_string"].splitlines()[-1]
            recipe = recipe_for_line(line)
            if recipe:
                fixed.append(f"**{recipe.title[0].upper() + recipe.title[1:]}** "
                             f"(`{c.input['path']}`, `{recipe.function}`): "
                             f"`{line.strip()}` is now "
                             f"`{c.input['new_string'].splitlines()[-1].strip()}`. "
                             f"{recipe.why}")
        if len(fixed) > 1:
            parts.append(f"There were {len(fixed)} bugs, the second hidden behind the "
                         "first:")
    parts.extend(f"{k}. {f}" for k, f in enumerate(fixed, start=1))
    grep = next((c for c in turn if c.name == "grep" and not c.is_error
                 and c is not found), None)
    if grep and grep.result:
        sites = [h for h in re.findall(r"^([^:\n]+):\d+:(.*)$", grep.result, re.M)
                 if not re.match(r"\s*def ", h[1]) and not h[0].startswith("tests/")]
        by_file = {}
        for path, _ in sites:
            by_file[path] = by_file.get(path, 0) + 1
        where = ", ".join(f"`{p}` ({n})" for p, n in by_file.items())
        names = " and ".join(f"`{n}`" for n in dict.fromkeys(
            re.findall(r"\w+", grep.input.get("pattern", "").split("(")[1].split(")")[0])
            if "(" in grep.input.get("pattern", "") else []))
        parts.append(f"Callers checked: {names or 'the changed functions'} "
                     f"{'appears' if ' and ' not in names else 'appear'} in "
                     f"{plural(len(sites), 'other line')} of `{grep.input.get('path')}` "
                     f"({where}); all of them compute invoice amounts, which the README "
                     "wants discounted from each tier's minimum and rounded half up.")
    listing = next((c for c in turn if c.name == "list_dir" and not c.is_error), None)
    if listing and (edits or found is not None):
        hidden = ".bak" not in (listing.result or "")
        parts.append("The edits kept `.bak` backups next to the changed files; "
                     + ("the workspace ignore list keeps them out of listings and searches."
                        if hidden else "they show up in listings, so delete them."))
    parts.append("No test was changed.")
    return say("\n\n".join(parts))
