"""The wall clock: :class:`SystemClock` reads ``time.time()`` (IO: a clock).

The protocol and :class:`~mini_agent.core.clock.ManualClock` live in ``core/clock.py``.

Source:
    The kit's rule that time is passed in as an argument and read only at the edges; section 6 of
    002_4516104fd432e704.txt (session entries carry a timestamp the caller may override).
"""

from __future__ import annotations

import time

from mini_agent.core.clock import Clock, ManualClock

__all__ = ["Clock", "ManualClock", "SystemClock"]


class SystemClock:
    """The real wall clock: ``now()`` is ``time.time()`` in seconds."""

    def now(self) -> float:
        """Read the wall clock.

        Returns:
            The current Unix time in seconds (``time.time()``).
        """
        return time.time()
