"""A deterministic brain that really solves the bundled demo task (``mini_agent.demo``).

``DemoBrain().respond(request)`` reads the request's messages and decides the next assistant
turn, like a model would: it surveys the project (list_dir, README, glob), runs the tests,
reads the failing tests and greps for the functions they call, reads those modules, recognises
the bug, fixes it with edit_file, runs the tests again, follows the next failure, verifies the
callers and ends with a summary (``end_turn``). Tools really execute, so every decision comes
from what the tools returned: failing test ids and lines from the test report, files from grep
hits, the exact line to replace from read_file output. A failed edit makes it re-read the file
and retry from the fresh text.

It is a stateless function of the request: no memory between calls. It needs only the newest
tool results (the last user message) and its own earlier ``tool_use`` inputs and text, which
observation masking never touches, so a masked view leads to the same run as the full history.
Views that drop or hide more are read for what they still show: after ``context_collapse`` or
``auto_compact`` dropped the first edit, the failing test names in the newest report tell which
bug is left (a one-cent error means rounding), and once the tests pass the fixes are found in
the code again by grep instead of read off edits it no longer sees; a result a view masked or
cleared in the newest turn is fetched once more, and hidden again, the brain stops instead of
looping (``tests/test_demo_brain_views.py`` runs the task under each view).
It also answers follow-up questions about files it read (``demo_follow_ups.py``) and the
continuation prompt of ``auto_continue`` (it recomputes the reply it was cut off in and sends
the rest).

This module is the decision procedure only. What it knows about the demo project (the two
planted bugs as ``RECIPES``, the test report's format) is in ``demo_bugs.py``; the machinery
any stateless brain needs (tool calls paired with results, reply builders, tool ids) is in
``brain_kit.py``. Does not: understand arbitrary tasks; it knows the bugs planted in the demo
project, and says so honestly when it finds neither. Taught in
``notebooks/03_observation_masking.ipynb``; the run is what ``mini-agent demo`` shows.

Source:
    000_86e3ff2076a5ae37.txt (an agent that reads files, runs commands and edits code; a
    masked view still answers about earlier files); section 1 of 002_4516104fd432e704.txt
    (``--dry-run``: the agent loop with no API).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from mini_agent.core.compaction import COLLAPSE_NOTICE
from mini_agent.offline.brain_kit import (Call, Reply, act, assign_tool_ids, call_turns,
                                          history_seed, is_prompt, numbered_lines, plural,
                                          require_offered_tools, rest_after, say,
                                          split_continuation, texts, tool_calls, use,
                                          view_was_cut)
from mini_agent.offline.demo_bugs import (DEFAULT_TEST_COMMAND, FIXED_PATTERN, RECIPES,
                                          TestReport, called_names, cent_off, find_bug,
                                          parse_test_report, recipe_for_line)
from mini_agent.offline.demo_follow_ups import fix_summary, follow_up
from mini_agent.offline.demo_reading import (ROUNDING_PATTERN, asks_for_a_fix, def_pattern,
                                             effective_turn, package_of, purpose)

MAX_TASK_TOOL_CALLS = 40
"""Safety bound: after this many tool calls on one task the brain stops and reports."""

class DemoBrain:
    """Solves the bundled demo task through the six kit tools; deterministic and stateless.

    ``respond(request) -> {"content": [blocks], "stop_reason": "tool_use" | "end_turn"}``
    where ``request`` is a ``/v1/messages`` body (``messages``, optional ``tools``). Tool ids
    are derived from a hash of the history, so they are unique and identical on every run.
    """

    def respond(self, request: dict[str, Any]) -> Reply:
        """Decide the next assistant turn for this request.

        Args:
            request: the ``/v1/messages`` body (``messages``, optional ``tools``).

        Returns:
            A :data:`~mini_agent.offline.brain_kit.Reply` with tool ids assigned: tool calls
            for the next step of the task, a follow-up answer, only the rest of a reply cut
            by ``max_tokens`` when the request ends with the continue prompt, or an
            ``end_turn`` saying a needed tool is not offered.
        """
        messages, pieces_done = split_continuation(request.get("messages") or [])
        reply = self._decide(messages) if messages else say("There is no message to answer.")
        reply = require_offered_tools(reply, request)
        if pieces_done:
            reply = rest_after(reply, pieces_done)
        return assign_tool_ids(reply, history_seed(request.get("messages") or []))

    def _decide(self, messages: list[dict[str, Any]]) -> Reply:
        prompts = [i for i, m in enumerate(messages) if is_prompt(m)]
        if not prompts:
            return say("I have no question to answer yet.")
        start = prompts[-1]
        prompt = texts(messages[start])
        turns = call_turns(messages[start:])
        segment = [call for turn in turns for call in turn]
        earlier = tool_calls(messages[:start])
        is_task = bool(re.search(r"\b(test|fix|bug|fail)", prompt, re.I)) and (
            start == prompts[0] or asks_for_a_fix(prompt))
        if not is_task and COLLAPSE_NOTICE in prompt:
            # The view collapsed the newest prompt itself (the task was not the first prompt,
            # so the notice follows an earlier one): the work the tail shows goes on. A
            # greeting's reply makes no tool call; a follow-up cut this way is not told apart.
            is_task = bool(segment)
        if is_task:
            return self._task(segment, turns, view_was_cut(messages))
        return follow_up(prompt, segment, earlier, cut=view_was_cut(messages))

    # ----------------------------------------------------------------------- the task

    def _task(self, calls: list[Call], turns: list[list[Call]], cut: bool) -> Reply:
        """The next step of the task, from what the view still shows.

        ``cut`` says the view dropped the early conversation (``context_collapse``,
        ``auto_compact``): edits and reads made before the cut are then missing from
        ``calls``, so the steps that need them read the state off the code and the latest
        test report instead. A result the view hid (masked, cleared) in the newest turn is
        fetched again once; hidden again, the brain stops instead of looping.
        """
        if not calls:
            return act("I'll start by looking at how the project is laid out.",
                       use("list_dir", path="."))
        if len(calls) >= MAX_TASK_TOOL_CALLS:
            return say(f"I have made {len(calls)} tool calls without finishing, so I am "
                       "stopping here; the last test report above shows where things stand.")
        if any(c.result is None for c in turns[-1]):
            return say("The last tool call has no result yet, so I am waiting for it.")
        last_turn, fetched_again = effective_turn(turns)
        hidden = [c for c in last_turn if c.hidden and c.name != "edit_file"]
        if hidden and fetched_again:
            return say("The results of my tool calls are hidden from my context as soon as "
                       "they arrive (the view masks or clears them), so I cannot see what "
                       "they returned. I am stopping here rather than guessing.")
        if hidden:
            names = ", ".join(f"`{c.name}`" for c in hidden)
            return act(f"The output of {names} is no longer in my context (the view hid it), "
                       "so I'll run the same "
                       f"{'call' if len(hidden) == 1 else 'calls'} again.",
                       *[use(c.name, **c.input) for c in hidden])
        purposes = {purpose(c) for c in last_turn}
        if "edit" in purposes:
            return self._after_edit(calls, last_turn)
        if "test" in purposes:
            return self._after_test(calls, last_turn[-1], cut)
        if "locate" in purposes:
            return self._after_locate(last_turn)
        if "inspect" in purposes:
            return self._after_inspect(last_turn)
        if "overview" in purposes:
            return self._after_overview(last_turn)
        if "survey" in purposes:
            return self._after_survey(last_turn[0])
        return fix_summary(calls, last_turn)

    def _after_survey(self, call: Call) -> Reply:
        entries = [] if call.is_error else (call.result or "").splitlines()
        dirs = [e.rstrip("/") for e in entries if e.endswith("/")]
        files = [e for e in entries if not e.endswith("/")]
        text = (f"The project root has {plural(len(dirs), 'directory')} "
                f"({', '.join(f'`{d}/`' for d in dirs) or 'none'}) and "
                f"{plural(len(files), 'file')} ({', '.join(f'`{f}`' for f in files) or 'none'}).")
        uses = []
        readme = next((f for f in files if f.lower().startswith("readme")), None)
        runner = next((f for f in files if f == "run_tests.py"), None)
        if readme:
            text += f" I'll read `{readme}` for the intended behaviour"
            uses.append(use("read_file", path=readme))
        else:
            text += " There is no README, so I'll start from the code"
        if runner:
            text += f", read `{runner}` to see how the tests are run,"
            uses.append(use("read_file", path=runner))
        text += " and list the Python sources."
        uses.append(use("glob", pattern="**/*.py"))
        return act(text, *uses)

    def _after_overview(self, calls: list[Call]) -> Reply:
        readme = next((c for c in calls if c.name == "read_file"
                       and c.input["path"].lower().startswith("readme")), None)
        runner = next((c for c in calls if c.name == "read_file"
                       and c.input["path"] == "run_tests.py"), None)
        sources = next((c.result or "" for c in calls if c.name == "glob"), "")
        readme_text = "\n".join(numbered_lines(readme.result).values()) if readme else ""
        command = next((line.strip() for line in readme_text.splitlines()
                        if re.match(r"^\s*python3? .*(run_tests|unittest|pytest)", line)), None)
        if command is None:
            command = (DEFAULT_TEST_COMMAND if "run_tests.py" in sources.split()
                       else "python3 -m unittest discover -s tests")
        py = [p for p in sources.splitlines() if p.endswith(".py")]
        tests = [p for p in py if p.startswith("tests/")]
        headings = re.findall(r"^## (.+)$", readme_text, re.M)
        text = ""
        if headings:
            text += (f"The README covers {', '.join(h.lower() for h in headings)}; the pricing "
                     "rules there are the specification the tests check. ")
        runner_lines = numbered_lines(runner.result) if runner else {}
        if runner_lines:
            uses_unittest = any("unittest" in line for line in runner_lines.values())
            text += (f"`run_tests.py` ({len(runner_lines)} lines) "
                     + ("discovers `tests/` with `unittest` and " if uses_unittest else "")
                     + "prints a report per test module plus the failing lines. ")
        text += (f"There are {len(py) - len(tests)} source files and {len(tests)} test files. "
                 f"Before reading code, I'll run the test suite (`{command}`) to see what fails.")
        return act(text, use("run_bash", command=command))

    def _after_test(self, calls: list[Call], run: Call, cut: bool = False) -> Reply:
        report = parse_test_report(run.result or "")
        if run.is_error or report is None:
            first = (run.result or "").strip().splitlines()[-1:] or ["no output"]
            return say(f"The test command did not produce a test report ({first[0]}), so I "
                       "cannot tell what fails. Please check that it runs in this workspace.")
        edits = [c for c in calls if c.name == "edit_file" and not c.is_error]
        if report.ok:
            if cut:
                return self._verify_after_cut(report, calls)
            if not edits:
                return say(f"All {report.ran} tests pass already; there is nothing to fix.")
            return self._verify(report, edits)
        lines = []
        for test_id, where, code, error in report.failures:
            lines.append(f"- `{test_id}` ({where}): `{code}` fails with `{error}`")
        failing = "\n".join(lines)
        names = list(dict.fromkeys(n for f in report.failures for n in called_names(f[2])))
        cent = next((c for c in (cent_off(f[3]) for f in report.failures) if c), None)
        edited = ", ".join(dict.fromkeys(f"`{c.input['path']}`" for c in edits))
        still = (f"{plural(len(report.failures), 'test')} still "
                 f"{'fails' if len(report.failures) == 1 else 'fail'}:\n{failing}\n\n")
        if cent and edits:
            package = str(PurePosixPath(edits[0].input["path"]).parent)
            text = (f"After the edit to {edited}, {report.passed} of {report.ran} tests pass; "
                    f"{still}The result is off by exactly one cent ({cent[0]} instead of "
                    f"{cent[1]}). The discount is applied now, so what is left is rounding: "
                    "the README says halves round up. I'll look at every place that rounds "
                    "amounts.")
            return act(text, use("grep", pattern=ROUNDING_PATTERN, path=package))
        if cent:  # the edit before is out of view: the failing test tells which bug is left
            package = package_of(calls)
            text = (f"{report.passed} of {report.ran} tests pass; "
                    f"{plural(len(report.failures), 'test')} "
                    f"{'fails' if len(report.failures) == 1 else 'fail'}:\n{failing}\n\n"
                    f"The result is off by exactly one cent ({cent[0]} instead of {cent[1]}), "
                    "so the amounts are right up to rounding, and the README says halves "
                    "round up. I'll look at every place that rounds amounts.")
            where = {"path": package} if package else {"path": ".", "glob": "*.py"}
            return act(text, use("grep", pattern=ROUNDING_PATTERN, **where))
        if not edits or not any(purpose(c) == "read_tests" for c in calls):
            files = list(dict.fromkeys(f[1].split(":")[0] for f in report.failures if f[1]))
            text = (f"{report.ran - report.passed} of {report.ran} tests fail:\n{failing}\n\n"
                    "I'll read the failing tests and look up where "
                    f"{', '.join(f'`{n}`' for n in names)} "
                    f"{'is' if len(names) == 1 else 'are'} defined.")
            uses = [use("read_file", path=f) for f in files]
            return act(text, *uses, use("grep", pattern=def_pattern(names), path=".",
                                          glob="*.py"))
        text = (f"After the edit to {edited}, {report.passed} of {report.ran} tests pass; "
                f"{still}I'll look up the functions this test calls.")
        return act(text, use("grep", pattern=def_pattern(names), path=".", glob="*.py"))

    def _after_locate(self, calls: list[Call]) -> Reply:
        grep = next(c for c in calls if c.name == "grep")
        hits = [] if grep.is_error else re.findall(r"^([^:\n]+):(\d+):(.*)$",
                                                   grep.result or "", re.M)
        hits = [h for h in hits if not h[0].startswith("tests/")]
        if not hits:
            return say(f"grep found nothing for `{grep.input.get('pattern')}` outside the "
                       "tests, so I cannot locate the code under test. I am stopping here.")
        found = []
        for path, line, code in hits:
            m = re.match(r"\s*def (\w+)", code)
            what = f"`{m.group(1)}`" if m else f"`{code.strip()}`"
            found.append(f"{what} at `{path}` line {line}")
        files = list(dict.fromkeys(h[0] for h in hits))
        tests_read = [c.input["path"] for c in calls if purpose(c) == "read_tests"]
        text = ""
        if tests_read:
            text += (f"The failing tests ({', '.join(f'`{t}`' for t in tests_read)}) check the "
                     "README rules directly, so the tests look right and the code is suspect. ")
        text += (f"grep finds {'; '.join(found)}. "
                 f"Reading {'that module' if len(files) == 1 else 'those modules'}.")
        return act(text, *[use("read_file", path=f) for f in files])

    def _after_inspect(self, calls: list[Call]) -> Reply:
        edits, notes = [], []
        for call in calls:
            lines = numbered_lines(call.result)
            path = call.input.get("path", "")
            for recipe in RECIPES:
                bug = find_bug(recipe, lines)
                if bug is None:
                    continue
                number, line = bug
                old = line
                if sum(1 for v in lines.values() if v == line) > 1 and number - 1 in lines:
                    old = f"{lines[number - 1]}\n{line}"
                new = old[: len(old) - len(line)] + recipe.fix(line)
                notes.append(f"Found it: in `{path}`, `{recipe.function}` line {number} reads "
                             f"`{line.strip()}`. {recipe.why}")
                edits.append(use("edit_file", path=path, old_string=old, new_string=new))
        if not edits:
            read = ", ".join(f"`{c.input.get('path')}`" for c in calls)
            return say(f"I read {read} but found no line that explains the failures, so I "
                       "am stopping rather than guessing. The failing tests above are the "
                       "place to start.")
        clean = [c.input.get("path") for c in calls if not any(
            find_bug(r, numbered_lines(c.result)) for r in RECIPES)]
        text = "\n\n".join(notes)
        if clean:
            text += (f"\n\n{', '.join(f'`{p}`' for p in clean)} "
                     f"{'looks' if len(clean) == 1 else 'look'} correct: "
                     f"{'it only uses' if len(clean) == 1 else 'they only use'} the result.")
        return act(text + "\n\nFixing it, without touching the tests.", *edits)

    def _after_edit(self, calls: list[Call], turn: list[Call]) -> Reply:
        failed = [c for c in turn if c.name == "edit_file" and c.is_error]
        if failed:
            path = failed[0].input.get("path", "")
            tries = sum(1 for c in calls if c.name == "edit_file" and c.is_error
                        and c.input.get("path") == path)
            reason = (failed[0].result or "").splitlines()[0] if failed[0].result else "no reason"
            if tries >= 2:
                return say(f"The edit to `{path}` failed twice ({reason}). The file keeps "
                           "changing under me, so I am stopping instead of overwriting it.")
            return act(f"The edit did not apply: {reason}. The file must have changed since "
                       f"I read it, so I'll read `{path}` again and redo the edit from its "
                       "current text.", use("read_file", path=path))
        command = next((c.input["command"] for c in reversed(calls) if c.name == "run_bash"),
                       DEFAULT_TEST_COMMAND)
        edited = ", ".join(f"`{c.input['path']}`" for c in turn if c.name == "edit_file")
        return act(f"{edited} is updated. Running the test suite again.",
                   use("run_bash", command=command))

    def _verify(self, report: TestReport, edits: list[Call]) -> Reply:
        functions = [r.function for c in edits
                     if (r := recipe_for_line(c.input["old_string"].splitlines()[-1]))]
        functions = list(dict.fromkeys(functions))
        package = str(PurePosixPath(edits[0].input["path"]).parent)
        text = (f"All {report.ran} tests pass now. Before wrapping up I'll check who else calls "
                f"{' and '.join(f'`{f}`' for f in functions)}, since the fix changes "
                f"{'its' if len(functions) == 1 else 'their'} results for every caller, and "
                f"that the `.bak` backups the edits left in `{package}/` stay out of listings.")
        pattern = rf"\b({'|'.join(functions)})\(" if functions else r"\bdef "
        return act(text, use("grep", pattern=pattern, path=package),
                   use("list_dir", path=package))

    def _verify_after_cut(self, report: TestReport, calls: list[Call]) -> Reply:
        """Tests pass, but the view dropped earlier steps: find the fixes in the code again."""
        functions = [r.function for r in RECIPES]
        package = package_of(calls)
        where = {"path": package} if package else {"path": ".", "glob": "*.py"}
        text = (f"All {report.ran} tests pass now. My earlier steps are no longer in my "
                "context, so before wrapping up I'll find the fixed lines in the code again "
                f"and check who else calls {' and '.join(f'`{f}`' for f in functions)}, since "
                "a fix changes their results for every caller.")
        uses = [use("grep", pattern=FIXED_PATTERN, **where),
                use("grep", pattern=rf"\b({'|'.join(functions)})\(", **where)]
        if package:
            uses.append(use("list_dir", path=package))
        return act(text, *uses)
