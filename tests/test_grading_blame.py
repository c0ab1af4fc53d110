"""A stack dump's frame is resolved to the function that ran, never to another one.

``qualname_at`` turns the dump's ``co_name`` and line into the ``__qualname__`` that
``stub_out`` replaces; a wrong answer stubs out a function that never spun, and every later
check that calls it reports "skipped: `<that function>` timed out", blaming the wrong code.
When the frame cannot be resolved, the name as given (nothing of the module is stubbed) is
the safe answer.
"""

from __future__ import annotations

from types import ModuleType

import pytest

from mini_agent.grading.stack_dump import qualname_at

DECORATED = '''import functools


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


class Drain:
    @traced
    def __init__(self):
        self.tasks = []

    @traced
    def add(self, task):
        while True:
            pass
'''

CLOSURE = '''class Policy:
    def view(self, history, ctx):
        return history


def make_policy():
    def view(history, ctx):
        while True:
            pass
    return view
'''


def _module(source: str) -> ModuleType:
    module = ModuleType("learner")
    exec(compile(source, "learner.py", "exec"), module.__dict__)
    return module


def test_a_shared_decorator_wrapper_is_not_blamed_on_the_first_method_it_wraps():
    # `Drain.add` spins; the outermost graded frame is the wrapper (line 7), whose code every
    # decorated method shares and whose __qualname__ functools.wraps copied: the first one
    # in the class, `Drain.__init__`, was stubbed and blamed (a real grade of 02 with
    # `@traced` on __init__ and add: "skipped: `OrderedDrain.__init__` timed out in
    # check_add_starts_the_task_at_once" on every other check)
    module = _module(DECORATED)
    assert qualname_at(module, "wrapper", 7) == "wrapper"  # ambiguous: nothing stubbed


def test_a_closure_is_not_blamed_on_a_method_of_the_same_name_above_it():
    # the closure returned by make_policy spins (line 9): the method Policy.view, defined
    # above it, never ran, but it is the candidate nearest above the line
    module = _module(CLOSURE)
    assert qualname_at(module, "view", 9) == "view"


NESTED_CLASS = '''class Drain:
    def add(self, task):
        return task

    class Batch:
        def add(self, task):
            while True:
                pass
'''

SETTER = '''class Drain:
    @property
    def size(self):
        return 0

    @size.setter
    def size(self, value):
        while True:
            pass
'''


def test_a_method_of_a_nested_class_is_not_blamed_on_the_outer_class_method_above_it():
    # Drain.Batch.add spins (line 8); Drain.add (line 2) is the nearest candidate above the
    # line but does not hold it
    module = _module(NESTED_CLASS)
    assert qualname_at(module, "add", 8) == "Drain.Batch.add"


def test_a_property_setter_that_spun_is_reported_as_skipped_when_set_again():
    # the setter spun: the property is stubbed out as a getter only, so a later check that
    # sets it fails with "property of 'Drain' object has no setter", not as skipped
    from mini_agent.grading.runner import SkippedCall, stub_out
    module = _module(SETTER)
    qualname = qualname_at(module, "size", 9)
    calls: list[str] = []
    assert stub_out(module, None, qualname, "skipped: `Drain.size` timed out", calls.append)
    drain = module.Drain()
    with pytest.raises((SkippedCall, AttributeError)):
        drain.size = 3
    assert calls == ["skipped: `Drain.size` timed out"]
