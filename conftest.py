"""Repository-wide pytest setup: notebooks' checked cells get their expected outputs.

Notebooks are stored without outputs; the expected output of each ``# NBVAL_CHECK_OUTPUT``
cell lives in ``notebooks/expected/<name>.json`` (see ``mini_agent.notebook_outputs``).
"""

import pytest

from mini_agent.notebook_outputs import apply_expected


def pytest_collection_modifyitems(session, config, items):
    """Hand nbval the recorded outputs; a checked cell without one is an error."""
    problems = apply_expected(items)
    if problems:
        raise pytest.UsageError("\n".join(problems))
