"""The examples in the package's docstrings run and print what they say."""

import doctest
import importlib
import pkgutil

import pytest

import mini_agent


def _modules_with_examples() -> list[str]:
    finder, names = doctest.DocTestFinder(), []
    for info in pkgutil.walk_packages(mini_agent.__path__, "mini_agent."):
        if info.name.startswith(("mini_agent.ui", "mini_agent.demo")):
            continue   # widgets need a front end; the demo is run by its own tests
        module = importlib.import_module(info.name)
        if any(t.examples for t in finder.find(module, module=module)):
            names.append(info.name)
    return names


MODULES = _modules_with_examples()


def test_the_package_has_examples_to_run():
    assert len(MODULES) >= 10


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), report=False,
                             optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
