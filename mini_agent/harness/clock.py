"""The wall clock: :class:`SystemClock` reads ``time.time()`` (IO: a clock).

The protocol and :class:`~mini_agent.core.clock.ManualClock` live in ``core/clock.py``.
"""

from __future__ import annotations

import time

from mini_agent.core.clock import Clock, ManualClock

__all__ = ["Clock", "ManualClock", "SystemClock"]


class SystemClock:
    """The real wall clock: ``now()`` is ``time.time()`` in seconds."""

    def now(self) -> float:
        """Return the current Unix time in seconds."""
        return time.time()
