"""Shared test setup: make ``tests/strategies.py`` importable and locate the shared real data."""

import sys
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS_DIR))

SHARED_DATA = TESTS_DIR.parent.parent / "shared" / "data"
"""Real public agent transcripts, kept outside the repository (see its README)."""


@pytest.fixture
def shared_data() -> Path:
    """Path of ``../shared/data``; skips the test when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent")
    return SHARED_DATA
