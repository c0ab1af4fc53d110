"""The clock protocol and a manual clock (pure: the wall clock lives in ``harness/clock.py``).

Clocks the kit reads time from, so notebooks and tests can move time by hand.

Cache TTLs (episode 05), the 60-minute micro-compaction cut-off (episode 04), timeline
times (episode 08) and session timestamps (episode 07) all read a clock object instead of
``time.time()``. :class:`ManualClock` only moves when told to, which makes those features
deterministic and teachable ("advance 61 minutes and watch the cache expire").

Source:
    the kit's own layering (h11's rule that the core does no IO: time is passed in).
"""

from __future__ import annotations

from typing import Protocol


class Clock(Protocol):
    """Anything with ``now() -> float`` (seconds since the Unix epoch)."""

    def now(self) -> float:  # pragma: no cover - protocol
        """Return the current time.

        Returns:
            Seconds since the Unix epoch.
        """
        ...


class ManualClock:
    """A clock that moves only through :meth:`advance` or :meth:`set`.

    Args:
        start: initial Unix time in seconds (default 1_767_225_600 = 2026-01-01T00:00:00Z,
            so printed times are stable across machines).

    >>> c = ManualClock(); _ = c.advance(90); c.now() - 1_767_225_600
    90.0
    """

    def __init__(self, start: float = 1_767_225_600.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        """Return the clock's current time.

        Returns:
            Unix seconds; changes only through :meth:`advance` or :meth:`set`.
        """
        return self._now

    def advance(self, seconds: float) -> float:
        """Move the clock forward.

        Args:
            seconds: how far, in seconds (>= 0).

        Returns:
            The new time in Unix seconds.

        Raises:
            ValueError: ``seconds`` < 0.
        """
        if seconds < 0:
            raise ValueError(f"ManualClock cannot go back in time (advance({seconds}))")
        self._now += seconds
        return self._now

    def set(self, when: float) -> None:
        """Jump to a later time.

        Args:
            when: the new time in Unix seconds; not earlier than now.

        Raises:
            ValueError: ``when`` is earlier than the current time.
        """
        if when < self._now:
            raise ValueError(f"ManualClock cannot go back in time ({when} < {self._now})")
        self._now = float(when)
