"""Shared test setup: make ``tests/strategies.py`` importable and locate the shared real data."""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from mini_agent.harness.real_sessions import shared_data_dir

# Property tests: no per-example deadline and no "too slow" health check (2-core machines
# are noisy); under CI the examples are derived from the test, so a run is reproducible.
settings.register_profile("kit", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          derandomize=bool(os.environ.get("CI")))
settings.load_profile("kit")

TESTS_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS_DIR))

SHARED_DATA = shared_data_dir(TESTS_DIR)
"""Real public agent transcripts, kept outside the repository (see its README):
``$MINI_AGENT_SHARED_DATA``, else ``../shared/data``."""


@pytest.fixture
def shared_data() -> Path:
    """Path of the shared data folder; skips the test when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent")
    return SHARED_DATA
