"""MemoryTool's clock must give Unix seconds: a datetime clock is refused at construction.

A clock whose ``now()`` returns a naive or aware ``datetime`` used to pass construction and
fail deep inside the first write with a bare ``TypeError`` (``Object of type datetime is not
JSON serializable``), after the memory file was written but before its provenance was. Now
the constructor reads the clock once and names ``clock``; nothing is created on disk.
"""

from __future__ import annotations

import datetime
import math
import time

import pytest

from mini_agent.core.clock import ManualClock
from mini_agent.harness.memory import MemoryTool
from mini_agent.harness.memory_fields import clock_seconds


class Fixed:
    """A clock that always says ``value``."""

    def __init__(self, value):
        self.value = value

    def now(self):
        return self.value


@pytest.mark.parametrize("value", [
    datetime.datetime(2026, 1, 1, 9, 0),                               # naive
    datetime.datetime(2026, 1, 1, 9, 0, tzinfo=datetime.timezone.utc),  # aware
    "1767225600", True, math.nan, math.inf, None,
])
def test_a_clock_that_does_not_give_seconds_is_refused_and_nothing_is_made(tmp_path, value):
    base = tmp_path / "m"
    with pytest.raises(ValueError) as caught:
        MemoryTool(base, clock=Fixed(value))
    message = str(caught.value)
    assert message.startswith("clock.now() must return Unix seconds (a finite int or float")
    assert f"got {type(value).__name__} " in message and ".timestamp()" in message
    assert not base.exists()


def test_a_function_passed_as_the_clock_is_a_type_error_naming_clock(tmp_path):
    with pytest.raises(TypeError, match=r"^clock must have a now\(\) method"):
        MemoryTool(tmp_path / "m", clock=time.time)
    assert not (tmp_path / "m").exists()


def test_a_clock_that_goes_bad_later_stops_the_command_before_any_write(tmp_path):
    clock = Fixed(1_767_225_600.0)
    tool = MemoryTool(tmp_path, clock=clock)
    clock.value = datetime.datetime(2026, 1, 2)
    with pytest.raises(ValueError, match=r"^clock\.now\(\) must return Unix seconds"):
        tool.call({"command": "create", "path": "/memories/a.md", "file_text": "x"})
    assert list((tmp_path / "memories").iterdir()) == []


def test_seconds_clocks_still_work_and_the_write_is_stamped(tmp_path):
    tool = MemoryTool(tmp_path, clock=ManualClock(start=100.0))
    tool.call({"command": "create", "path": "/memories/a.md", "file_text": "x"})
    assert tool.metadata()["/memories/a.md"]["created_at"] == 100.0
    assert clock_seconds(Fixed(5)) == 5.0
    with pytest.raises(ValueError, match="now must be Unix seconds"):
        tool.expire(now=datetime.datetime(2026, 1, 1))
