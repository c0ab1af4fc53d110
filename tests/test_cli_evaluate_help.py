"""``mini-agent evaluate --help`` read by someone who has not opened the notebooks.

The help must say what the numbers in the policy names mean, which policies run by default,
which files a folder contributes, and what "the bound" that costs are compared with is.
"""

from __future__ import annotations

import pytest

from mini_agent import cli
from mini_agent.core.replay import DEFAULT_POLICIES
from mini_agent.harness.transcript_scan import SUFFIXES


@pytest.fixture
def evaluate_help(capsys) -> str:
    with pytest.raises(SystemExit):
        cli.main(["evaluate", "--help"])
    return " ".join(capsys.readouterr().out.split())


def test_the_help_names_the_default_policies_one_by_one(evaluate_help):
    assert f"default: {', '.join(DEFAULT_POLICIES)}" in evaluate_help


def test_the_help_says_what_the_numbers_in_mask_n_and_chunked_n_are(evaluate_help):
    assert "mask-N keeps the newest N tool results" in evaluate_help
    assert "chunked-N keeps the newest 4 and masks the older ones N at a time" in evaluate_help


def test_the_help_names_the_files_a_folder_contributes(evaluate_help):
    assert all(f"*{suffix}" in evaluate_help for suffix in SUFFIXES)
    assert "Claude Code" in evaluate_help and "mini-swe-agent" in evaluate_help


def test_the_help_says_what_the_bound_is(evaluate_help):
    assert "hindsight bound (the cheapest masking schedule" in evaluate_help
