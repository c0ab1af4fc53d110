"""Run the unit tests in tests/ and print a short, stable report.

Usage: python3 run_tests.py

Prints one line per test module, then each failure with the failing line of the test and the
error. Exits 0 when every test passes, 1 otherwise.
"""

import os
import sys
import traceback
import unittest

ROOT = os.path.dirname(os.path.abspath(__file__))


class RecordingResult(unittest.TestResult):
    """A TestResult that keeps each problem's exception info, to report the failing line."""

    def __init__(self):
        super().__init__()
        self.problems = []  # (kind, test, exc_info)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.problems.append(("FAIL", test, err))

    def addError(self, test, err):
        super().addError(test, err)
        self.problems.append(("ERROR", test, err))


def iter_tests(suite):
    """Yield the individual test cases of a (nested) suite."""
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from iter_tests(item)
        else:
            yield item


def describe(kind, test, err):
    """Return the report of one problem: test id, location in the test file, error."""
    exc_type, exc, tb = err
    lines = [f"{kind}: {test.id()}"]
    frames = [f for f in traceback.extract_tb(tb) if f.filename.startswith(ROOT)]
    if frames:
        frame = frames[-1]
        where = os.path.relpath(frame.filename, ROOT).replace(os.sep, "/")
        lines.append(f"  {where}:{frame.lineno} in {frame.name}")
        if frame.line:
            lines.append(f"    {frame.line.strip()}")
    message = str(exc).splitlines()[0] if str(exc) else ""
    lines.append(f"  {exc_type.__name__}: {message}".rstrip())
    return "\n".join(lines)


def main():
    sys.path.insert(0, ROOT)
    suite = unittest.defaultTestLoader.discover(os.path.join(ROOT, "tests"))
    test_ids = [test.id() for test in iter_tests(suite)]  # the suite forgets them once run
    result = RecordingResult()
    suite.run(result)
    failed_ids = {test.id() for _, test, _ in result.problems}
    counts = {}
    for test_id in test_ids:
        module = test_id.split(".")[0]
        total, bad = counts.get(module, (0, 0))
        counts[module] = (total + 1, bad + (test_id in failed_ids))
    for module, (total, bad) in sorted(counts.items()):
        print(f"{module}: {total} tests, {'ok' if not bad else f'{bad} failed'}")
    for kind, test, err in sorted(result.problems, key=lambda p: p[1].id()):
        print()
        print(describe(kind, test, err))
    print()
    failures, errors = len(result.failures), len(result.errors)
    passed = result.testsRun - failures - errors
    print(f"Ran {result.testsRun} tests: {passed} passed, {failures} failed, {errors} errors")
    print("FAILED" if failures or errors else "OK")
    return 1 if failures or errors else 0


if __name__ == "__main__":
    sys.exit(main())
