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
It also answers follow-up questions about files it read (re-reading one whose observation was
masked) and the continuation prompt of ``auto_continue`` (it recomputes the reply it was cut
off in and sends the rest).

Does not: understand arbitrary tasks; it knows two bug patterns (``RECIPES``), the ones planted
in the demo project, and says so honestly when it finds neither. Taught in
``notebooks/03_observation_masking.ipynb``; the run is what ``mini-agent demo`` shows.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Callable

from mini_agent.core.messages import content_blocks, tool_result_text

CONTINUE_PREFIX = "Continue where you left off"
"""Start of ``continuation.CONTINUE_PROMPT`` (seed 000, autoContinue)."""
MAX_TASK_TOOL_CALLS = 40
"""Safety bound: after this many tool calls on one task the brain stops and reports."""
DEFAULT_TEST_COMMAND = "python3 run_tests.py"

Reply = dict[str, Any]


@dataclass(frozen=True)
class Call:
    """One tool call seen in the request: the ``tool_use`` and its ``tool_result`` (if any)."""

    id: str
    name: str
    input: dict[str, Any]
    result: str | None = None
    is_error: bool = False


@dataclass(frozen=True)
class Recipe:
    """A bug pattern: inside ``def function``, a line matching ``bad`` is wrong; ``fix`` repairs it."""

    function: str
    bad: re.Pattern[str]
    fix: Callable[[str], str]
    title: str
    why: str


RECIPES = (
    Recipe("bulk_discount_rate",
           re.compile(r"^\s*if\s+quantity\s*>\s*tier\.min_quantity\s*:\s*(#.*)?$"),
           lambda line: re.sub(r">(?!=)", ">=", line, count=1),
           "the bulk discount started one unit too late",
           "README rule 2 says the tiers apply to \"10 or more\" units, but the comparison is "
           "`>`, so a line of exactly 10 units gets no discount. The minimum must be "
           "inclusive: `>=`."),
    Recipe("round_money",
           re.compile(r"^\s*return\s+amount\.quantize\(CENT\)\s*(#.*)?$"),
           lambda line: line.replace("quantize(CENT)", "quantize(CENT, rounding=ROUND_HALF_UP)"),
           "half cents were rounded to even",
           "`Decimal.quantize` without a rounding mode uses the context default, "
           "ROUND_HALF_EVEN (banker's rounding), so 47.405 becomes 47.40. README rule 1 says "
           "halves round up, and `round_percent` in the same module already passes "
           "`rounding=ROUND_HALF_UP`, which the module imports."),
)


# --------------------------------------------------------------------------- reading the request

def _texts(message: dict[str, Any]) -> str:
    return "\n".join(b.get("text", "") for b in content_blocks(message) if b.get("type") == "text")


def _is_prompt(message: dict[str, Any]) -> bool:
    blocks = content_blocks(message)
    return (message.get("role") == "user" and not any(b.get("type") == "tool_result"
                                                      for b in blocks)
            and not _texts(message).startswith(CONTINUE_PREFIX))


def _turns(messages: list[dict[str, Any]]) -> list[list[Call]]:
    """Per assistant turn with tool calls, its tool_uses paired with their tool_results."""
    turns = []
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        results = {}
        if i + 1 < len(messages):
            for b in content_blocks(messages[i + 1]):
                if b.get("type") == "tool_result":
                    results[b.get("tool_use_id")] = b
        turn = []
        for b in content_blocks(message):
            if b.get("type") == "tool_use":
                r = results.get(b.get("id"))
                turn.append(Call(b.get("id", ""), b.get("name", ""), dict(b.get("input") or {}),
                                 None if r is None else tool_result_text(r),
                                 bool(r and r.get("is_error"))))
        if turn:
            turns.append(turn)
    return turns


def _calls(messages: list[dict[str, Any]]) -> list[Call]:
    """All tool calls of ``messages`` with their results, oldest first."""
    return [call for turn in _turns(messages) for call in turn]


def _numbered(result: str | None) -> dict[int, str]:
    """Lines of a read_file observation as {line_number: text} (empty if masked or failed)."""
    lines = {}
    for row in (result or "").splitlines():
        m = re.match(r"^\s*(\d+)\t(.*)$", row)
        if m:
            lines[int(m.group(1))] = m.group(2)
    return lines


def _purpose(call: Call) -> str:
    """What the brain meant by one of its own tool calls (read back from its input)."""
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
        return "locate" if pattern.startswith("def ") or "quantize" in pattern else "verify"
    if call.name == "read_file":
        return "read_tests" if path.startswith("tests/") else "inspect"
    return "edit" if call.name == "edit_file" else "other"


@dataclass(frozen=True)
class TestReport:
    """The parts of a ``run_tests.py`` report the brain uses."""

    ran: int
    passed: int
    exit_code: int | None
    failures: tuple[tuple[str, str, str, str], ...]  # (test id, location, code line, error)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.failures


def parse_test_report(text: str) -> TestReport | None:
    """Parse the demo's test report; None if the text is not one (e.g. a masked observation)."""
    summary = re.search(r"^Ran (\d+) tests: (\d+) passed", text, re.M)
    code = re.search(r"^\[exit code: (-?\d+)\]$", text, re.M)
    failures = []
    for m in re.finditer(r"^(?:FAIL|ERROR): (\S+)\n((?:  .*\n?)*)", text, re.M):
        detail = [line.strip() for line in m.group(2).splitlines()]
        where = next((d.split(" in ")[0] for d in detail if re.match(r"\S+\.py:\d+ in ", d)), "")
        code_line = detail[1] if len(detail) > 2 else ""
        failures.append((m.group(1), where, code_line, detail[-1] if detail else ""))
    if not summary:
        return None
    return TestReport(int(summary.group(1)), int(summary.group(2)),
                      int(code.group(1)) if code else None, tuple(failures))


def _called_names(code_line: str) -> list[str]:
    """Function names called on a failing test line, minus assertions and constructors."""
    names = re.findall(r"([A-Za-z_]\w*)\(", code_line)
    return [n for n in dict.fromkeys(names)
            if not n.startswith("assert") and not n[0].isupper() and n != "self"]


def _cent_off(error: str) -> tuple[str, str] | None:
    """(got, expected) if an assertion compares two Decimals exactly one cent apart."""
    m = re.search(r"Decimal\('(-?[\d.]+)'\) != Decimal\('(-?[\d.]+)'\)", error)
    if m and abs(round(float(m.group(1)) * 100) - round(float(m.group(2)) * 100)) == 1:
        return m.group(1), m.group(2)
    return None


def _find_bug(recipe: Recipe, lines: dict[int, str]) -> tuple[int, str] | None:
    """(line number, line) of the recipe's bad line inside ``def recipe.function``."""
    inside = False
    for n in sorted(lines):
        line = lines[n]
        if re.match(rf"^\s*def {recipe.function}\(", line):
            inside = True
        elif inside and re.match(r"^(def|class) ", line):
            inside = False
        elif inside and recipe.bad.match(line):
            return n, line
    return None


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") else f"{n} {word}s"


# --------------------------------------------------------------------------- the brain

class DemoBrain:
    """Solves the bundled demo task through the six kit tools; deterministic and stateless.

    ``respond(request) -> {"content": [blocks], "stop_reason": "tool_use" | "end_turn"}``
    where ``request`` is a ``/v1/messages`` body (``messages``, optional ``tools``). Tool ids
    are derived from a hash of the history, so they are unique and identical on every run.
    """

    def respond(self, request: dict[str, Any]) -> Reply:
        """Return the next assistant turn for this request."""
        messages = list(request.get("messages") or [])
        available = {t.get("name") for t in request.get("tools") or []}
        pieces_done = ""
        while (len(messages) >= 3 and messages[-1].get("role") == "user"
               and _texts(messages[-1]).startswith(CONTINUE_PREFIX)
               and messages[-2].get("role") == "assistant"):
            pieces_done = _texts(messages[-2]) + pieces_done
            messages = messages[:-2]
        reply = self._decide(messages) if messages else _say("There is no message to answer.")
        reply = self._check_tools(reply, available)
        if pieces_done:
            reply = _rest_after(reply, pieces_done)
        seed = _id_seed(request.get("messages") or [])
        for k, block in enumerate(reply["content"]):
            if block["type"] == "tool_use":
                digest = hashlib.sha256(f"{seed}|{k}".encode()).hexdigest()[:24]
                block["id"] = f"toolu_01{digest}"
        return reply

    @staticmethod
    def _check_tools(reply: Reply, available: set[str]) -> Reply:
        missing = sorted({b["name"] for b in reply["content"] if b["type"] == "tool_use"}
                         - available)
        if not missing:
            return reply
        return _say(f"I need the {', '.join(missing)} tool(s) for the next step, but this "
                    "request offers none by that name, so I cannot continue.")

    def _decide(self, messages: list[dict[str, Any]]) -> Reply:
        prompts = [i for i, m in enumerate(messages) if _is_prompt(m)]
        if not prompts:
            return _say("I have no question to answer yet.")
        start = prompts[-1]
        prompt = _texts(messages[start])
        turns = _turns(messages[start:])
        segment = [call for turn in turns for call in turn]
        earlier = _calls(messages[:start])
        is_task = start == prompts[0] and re.search(r"\b(test|fix|bug|fail)", prompt, re.I)
        if is_task:
            return self._task(segment, turns[-1] if turns else [])
        return self._follow_up(prompt, segment, earlier)

    # ----------------------------------------------------------------------- the task

    def _task(self, calls: list[Call], last_turn: list[Call]) -> Reply:
        if not calls:
            return _act("I'll start by looking at how the project is laid out.",
                        _use("list_dir", path="."))
        if len(calls) >= MAX_TASK_TOOL_CALLS:
            return _say(f"I have made {len(calls)} tool calls without finishing, so I am "
                        "stopping here; the last test report above shows where things stand.")
        purposes = {_purpose(c) for c in last_turn}
        if any(c.result is None for c in last_turn):
            return _say("The last tool call has no result yet, so I am waiting for it.")
        if "edit" in purposes:
            return self._after_edit(calls, last_turn)
        if "test" in purposes:
            return self._after_test(calls, last_turn[-1])
        if "locate" in purposes:
            return self._after_locate(last_turn)
        if "inspect" in purposes:
            return self._after_inspect(last_turn)
        if "overview" in purposes:
            return self._after_overview(last_turn)
        if "survey" in purposes:
            return self._after_survey(last_turn[0])
        return self._summary(calls, last_turn)

    def _after_survey(self, call: Call) -> Reply:
        entries = [] if call.is_error else (call.result or "").splitlines()
        dirs = [e.rstrip("/") for e in entries if e.endswith("/")]
        files = [e for e in entries if not e.endswith("/")]
        text = (f"The project root has {_plural(len(dirs), 'directory')} "
                f"({', '.join(f'`{d}/`' for d in dirs) or 'none'}) and "
                f"{_plural(len(files), 'file')} ({', '.join(f'`{f}`' for f in files) or 'none'}).")
        uses = []
        readme = next((f for f in files if f.lower().startswith("readme")), None)
        runner = next((f for f in files if f == "run_tests.py"), None)
        if readme:
            text += f" I'll read `{readme}` for the intended behaviour"
            uses.append(_use("read_file", path=readme))
        else:
            text += " There is no README, so I'll start from the code"
        if runner:
            text += f", read `{runner}` to see how the tests are run,"
            uses.append(_use("read_file", path=runner))
        text += " and list the Python sources."
        uses.append(_use("glob", pattern="**/*.py"))
        return _act(text, *uses)

    def _after_overview(self, calls: list[Call]) -> Reply:
        readme = next((c for c in calls if c.name == "read_file"
                       and c.input["path"].lower().startswith("readme")), None)
        runner = next((c for c in calls if c.name == "read_file"
                       and c.input["path"] == "run_tests.py"), None)
        sources = next((c.result or "" for c in calls if c.name == "glob"), "")
        readme_text = "\n".join(_numbered(readme.result).values()) if readme else ""
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
        runner_lines = _numbered(runner.result) if runner else {}
        if runner_lines:
            uses_unittest = any("unittest" in line for line in runner_lines.values())
            text += (f"`run_tests.py` ({len(runner_lines)} lines) "
                     + ("discovers `tests/` with `unittest` and " if uses_unittest else "")
                     + "prints a report per test module plus the failing lines. ")
        text += (f"There are {len(py) - len(tests)} source files and {len(tests)} test files. "
                 f"Before reading code, I'll run the test suite (`{command}`) to see what fails.")
        return _act(text, _use("run_bash", command=command))

    def _after_test(self, calls: list[Call], run: Call) -> Reply:
        report = parse_test_report(run.result or "")
        if run.is_error or report is None:
            first = (run.result or "").strip().splitlines()[-1:] or ["no output"]
            return _say(f"The test command did not produce a test report ({first[0]}), so I "
                        "cannot tell what fails. Please check that it runs in this workspace.")
        edits = [c for c in calls if c.name == "edit_file" and not c.is_error]
        if report.ok:
            if not edits:
                return _say(f"All {report.ran} tests pass already; there is nothing to fix.")
            return self._verify(report, edits)
        lines = []
        for test_id, where, code, error in report.failures:
            lines.append(f"- `{test_id}` ({where}): `{code}` fails with `{error}`")
        failing = "\n".join(lines)
        names = list(dict.fromkeys(n for f in report.failures for n in _called_names(f[2])))
        if not any(_purpose(c) == "read_tests" for c in calls):
            files = list(dict.fromkeys(f[1].split(":")[0] for f in report.failures if f[1]))
            text = (f"{report.ran - report.passed} of {report.ran} tests fail:\n{failing}\n\n"
                    "I'll read the failing tests and look up where "
                    f"{', '.join(f'`{n}`' for n in names)} "
                    f"{'is' if len(names) == 1 else 'are'} defined.")
            uses = [_use("read_file", path=f) for f in files]
            return _act(text, *uses, _use("grep", pattern=_def_pattern(names), path=".",
                                          glob="*.py"))
        edited = ", ".join(dict.fromkeys(f"`{c.input['path']}`" for c in edits))
        text = (f"After the edit to {edited}, {report.passed} of {report.ran} tests pass; "
                f"{_plural(len(report.failures), 'test')} still "
                f"{'fails' if len(report.failures) == 1 else 'fail'}:\n{failing}\n\n")
        cent = next((c for c in (_cent_off(f[3]) for f in report.failures) if c), None)
        if cent:
            package = str(PurePosixPath(edits[0].input["path"]).parent)
            text += (f"The result is off by exactly one cent ({cent[0]} instead of {cent[1]}). "
                     "The discount is applied now, so what is left is rounding: the README "
                     "says halves round up. I'll look at every place that rounds amounts.")
            return _act(text, _use("grep", pattern=r"quantize|\bround\(", path=package))
        text += "I'll look up the functions this test calls."
        return _act(text, _use("grep", pattern=_def_pattern(names), path=".", glob="*.py"))

    def _after_locate(self, calls: list[Call]) -> Reply:
        grep = next(c for c in calls if c.name == "grep")
        hits = [] if grep.is_error else re.findall(r"^([^:\n]+):(\d+):(.*)$",
                                                   grep.result or "", re.M)
        hits = [h for h in hits if not h[0].startswith("tests/")]
        if not hits:
            return _say(f"grep found nothing for `{grep.input.get('pattern')}` outside the "
                        "tests, so I cannot locate the code under test. I am stopping here.")
        found = []
        for path, line, code in hits:
            m = re.match(r"\s*def (\w+)", code)
            what = f"`{m.group(1)}`" if m else f"`{code.strip()}`"
            found.append(f"{what} at `{path}` line {line}")
        files = list(dict.fromkeys(h[0] for h in hits))
        tests_read = [c.input["path"] for c in calls if _purpose(c) == "read_tests"]
        text = ""
        if tests_read:
            text += (f"The failing tests ({', '.join(f'`{t}`' for t in tests_read)}) check the "
                     "README rules directly, so the tests look right and the code is suspect. ")
        text += (f"grep finds {'; '.join(found)}. "
                 f"Reading {'that module' if len(files) == 1 else 'those modules'}.")
        return _act(text, *[_use("read_file", path=f) for f in files])

    def _after_inspect(self, calls: list[Call]) -> Reply:
        edits, notes = [], []
        for call in calls:
            lines = _numbered(call.result)
            path = call.input.get("path", "")
            for recipe in RECIPES:
                bug = _find_bug(recipe, lines)
                if bug is None:
                    continue
                number, line = bug
                old = line
                if sum(1 for v in lines.values() if v == line) > 1 and number - 1 in lines:
                    old = f"{lines[number - 1]}\n{line}"
                new = old[: len(old) - len(line)] + recipe.fix(line)
                notes.append(f"Found it: in `{path}`, `{recipe.function}` line {number} reads "
                             f"`{line.strip()}`. {recipe.why}")
                edits.append(_use("edit_file", path=path, old_string=old, new_string=new))
        if not edits:
            read = ", ".join(f"`{c.input.get('path')}`" for c in calls)
            return _say(f"I read {read} but found no line that explains the failures, so I "
                        "am stopping rather than guessing. The failing tests above are the "
                        "place to start.")
        clean = [c.input.get("path") for c in calls if not any(
            _find_bug(r, _numbered(c.result)) for r in RECIPES)]
        text = "\n\n".join(notes)
        if clean:
            text += (f"\n\n{', '.join(f'`{p}`' for p in clean)} "
                     f"{'looks' if len(clean) == 1 else 'look'} correct: "
                     f"{'it only uses' if len(clean) == 1 else 'they only use'} the result.")
        return _act(text + "\n\nFixing it, without touching the tests.", *edits)

    def _after_edit(self, calls: list[Call], turn: list[Call]) -> Reply:
        failed = [c for c in turn if c.name == "edit_file" and c.is_error]
        if failed:
            path = failed[0].input.get("path", "")
            tries = sum(1 for c in calls if c.name == "edit_file" and c.is_error
                        and c.input.get("path") == path)
            reason = (failed[0].result or "").splitlines()[0] if failed[0].result else "no reason"
            if tries >= 2:
                return _say(f"The edit to `{path}` failed twice ({reason}). The file keeps "
                            "changing under me, so I am stopping instead of overwriting it.")
            return _act(f"The edit did not apply: {reason}. The file must have changed since "
                        f"I read it, so I'll read `{path}` again and redo the edit from its "
                        "current text.", _use("read_file", path=path))
        command = next((c.input["command"] for c in reversed(calls) if c.name == "run_bash"),
                       DEFAULT_TEST_COMMAND)
        edited = ", ".join(f"`{c.input['path']}`" for c in turn if c.name == "edit_file")
        return _act(f"{edited} is updated. Running the test suite again.",
                    _use("run_bash", command=command))

    def _verify(self, report: TestReport, edits: list[Call]) -> Reply:
        functions = [r.function for c in edits for r in RECIPES
                     if r.bad.match(c.input["old_string"].splitlines()[-1])]
        functions = list(dict.fromkeys(functions))
        package = str(PurePosixPath(edits[0].input["path"]).parent)
        text = (f"All {report.ran} tests pass now. Before wrapping up I'll check who else calls "
                f"{' and '.join(f'`{f}`' for f in functions)}, since the fix changes "
                f"{'its' if len(functions) == 1 else 'their'} results for every caller, and "
                f"that the `.bak` backups the edits left in `{package}/` stay out of listings.")
        pattern = rf"\b({'|'.join(functions)})\(" if functions else r"\bdef "
        return _act(text, _use("grep", pattern=pattern, path=package),
                    _use("list_dir", path=package))

    def _summary(self, calls: list[Call], turn: list[Call]) -> Reply:
        edits = [c for c in calls if c.name == "edit_file" and not c.is_error]
        runs = [parse_test_report(c.result or "") for c in calls if c.name == "run_bash"]
        ran = next((r.ran for r in reversed(runs) if r and r.ok), None)
        parts = [f"All {ran} tests pass." if ran else "The test suite passes."]
        fixed = []
        for c in edits:
            line = c.input["old_string"].splitlines()[-1]
            recipe = next((r for r in RECIPES if r.bad.match(line)), None)
            if recipe:
                fixed.append(f"**{recipe.title[0].upper() + recipe.title[1:]}** "
                             f"(`{c.input['path']}`, `{recipe.function}`): "
                             f"`{line.strip()}` is now "
                             f"`{c.input['new_string'].splitlines()[-1].strip()}`. {recipe.why}")
        if len(fixed) > 1:
            parts.append(f"There were {len(fixed)} bugs, the second hidden behind the first:")
        parts.extend(f"{k}. {f}" for k, f in enumerate(fixed, start=1))
        grep = next((c for c in turn if c.name == "grep" and not c.is_error), None)
        if grep and grep.result:
            sites = [h for h in re.findall(r"^([^:\n]+):\d+:(.*)$", grep.result, re.M)
                     if not re.match(r"\s*def ", h[1])]
            by_file = {}
            for path, _ in sites:
                by_file[path] = by_file.get(path, 0) + 1
            where = ", ".join(f"`{p}` ({n})" for p, n in by_file.items())
            names = " and ".join(f"`{n}`" for n in dict.fromkeys(
                re.findall(r"\w+", grep.input.get("pattern", "").split("(")[1].split(")")[0])
                if "(" in grep.input.get("pattern", "") else []))
            parts.append(f"Callers checked: {names or 'the changed functions'} "
                         f"{'appears' if ' and ' not in names else 'appear'} in "
                         f"{_plural(len(sites), 'other line')} of `{grep.input.get('path')}` "
                         f"({where}); all of them compute invoice amounts, which the README "
                         "wants discounted from each tier's minimum and rounded half up.")
        listing = next((c for c in turn if c.name == "list_dir" and not c.is_error), None)
        if listing and edits:
            hidden = ".bak" not in (listing.result or "")
            parts.append("The edits kept `.bak` backups next to the changed files; "
                         + ("the workspace ignore list keeps them out of listings and searches."
                            if hidden else "they show up in listings, so delete them."))
        parts.append("No test was changed.")
        return _say("\n\n".join(parts))

    # ----------------------------------------------------------------------- follow-ups

    def _follow_up(self, prompt: str, segment: list[Call], earlier: list[Call]) -> Reply:
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
                         and c.input.get("path") == mentioned and _numbered(c.result)
                         and "offset" not in c.input), None)
            if read is None:
                before = any(c.name == "read_file" and c.input.get("path") == mentioned
                             for c in everything)
                text = (f"My earlier read of `{mentioned}` is no longer in my context (its "
                        "observation was masked), so I'll read it again." if before
                        else f"I haven't read `{mentioned}` yet; reading it.")
                if any(c.input.get("path") == mentioned and c.is_error for c in segment):
                    return _say(f"I could not read `{mentioned}`: "
                                f"{next(c.result for c in segment if c.is_error)}")
                return _act(text, _use("read_file", path=mentioned))
            return _say(_describe_file(mentioned, _numbered(read.result), prompt, everything))
        if re.search(r"\b(run|rerun)\b.*\btests?\b", lower):
            run = next((c for c in reversed(segment) if c.name == "run_bash"), None)
            if run is None:
                command = next((c.input["command"] for c in reversed(everything)
                                if c.name == "run_bash"), DEFAULT_TEST_COMMAND)
                return _act("Running the test suite.", _use("run_bash", command=command))
            report = parse_test_report(run.result or "")
            if report is None:
                return _say(f"The test command gave no report:\n\n{run.result}")
            return _say(f"{report.passed} of {report.ran} tests pass"
                        + (" - the suite is green." if report.ok else "; see the report above."))
        edits = [c for c in everything if c.name == "edit_file" and not c.is_error]
        if edits and re.search(r"chang|fix|edit|diff|bug|wrong", lower):
            rows = [f"- `{c.input['path']}`: `{c.input['old_string'].strip()}` -> "
                    f"`{c.input['new_string'].strip()}`" for c in edits]
            return _say("I changed these lines (each file kept a `.bak` backup):\n"
                        + "\n".join(rows))
        files = ", ".join(f"`{p}`" for p in known[:8]) or "none yet"
        return _say("I can answer questions about the files of this workspace, re-run the tests, "
                    f"or explain the changes I made. Files I have read: {files}.")


def _describe_file(path: str, lines: dict[int, str], prompt: str, calls: list[Call]) -> str:
    """Answer a question about a file from its (unmasked) read_file observation."""
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


def _id_seed(messages: list[dict[str, Any]]) -> str:
    """What tool ids hash: the parts of a history that views (masking) never change."""
    kept = []
    for message in messages:
        for b in content_blocks(message):
            if b.get("type") in ("text", "tool_use"):
                kept.append([message.get("role"), b.get("text"), b.get("name"), b.get("input")])
            elif b.get("type") == "tool_result":
                kept.append([message.get("role"), "tool_result"])
    return json.dumps(kept, sort_keys=True, ensure_ascii=False)


def _def_pattern(names: list[str]) -> str:
    return f"def ({'|'.join(names)})\\b" if names else "def test_"


def _use(name: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": "", "name": name, "input": input}


def _act(text: str, *uses: dict[str, Any]) -> Reply:
    return {"content": [{"type": "text", "text": text}, *uses], "stop_reason": "tool_use"}


def _say(text: str) -> Reply:
    return {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}


def _rest_after(reply: Reply, done: str) -> Reply:
    """Drop from ``reply`` the text already sent before a ``max_tokens`` cut (``done``)."""
    content, left = [], done
    for block in reply["content"]:
        if block["type"] == "text" and left:
            text = block["text"]
            if text.startswith(left):
                rest, left = text[len(left):], ""
                if rest.strip():
                    content.append({"type": "text", "text": rest})
                continue
            if left.startswith(text):
                left = left[len(text):]
                continue
            left = ""
        content.append(block)
    if not content:
        content = [{"type": "text", "text": "(That was the complete answer.)"}]
    return {"content": content, "stop_reason": reply["stop_reason"]}
