# Generated from solutions/08_context_lifecycle.py by `mini-agent make-exercises`.
# Replace each `raise NotImplementedError(...)` with your code, then run
# `mini-agent grade 08`. `mini-agent make-exercises` keeps your edits;
# only `--force` resets this file to the stubs.
"""Exercise 08: the four-stage context lifecycle (notebooks/08_context_lifecycle.ipynb).

* 08.1 ``tier_for_age(age, ...)``: Hot / Warm-A / Warm-B / Cold by exchange age;
* 08.2 ``timeline_line(exchange, *, segment, time_seconds)``: fold one exchange into ONE
  line in the seed's shape ``[14:30] read_file (seg-047): src/app.py 120 lines; found bug``;
* 08.3 ``eviction_order(segments)``: the order cold segments leave the store: by their
  insertion sequence, never by timestamp (ties must not reorder).

Grade with ``mini-agent grade 08``; the same checks pass on the kit's own functions
(``from mini_agent import tier_for_age, timeline_line, eviction_order``).
Source: the four-tier lifecycle blog post (Hot, Warm-A, Warm-B, Cold; seed 003; see
docs/sources.md in the kit).
"""

from __future__ import annotations

import datetime as dt


def tier_for_age(age: int, *, hot_exchanges: int = 3, warm_a_exchanges: int = 8,
                 warm_b_exchanges: int = 20) -> str:
    """Return "hot", "warm_a", "warm_b" or "cold" for an exchange ``age`` exchanges old.

    The newest exchange has age 0. Hot when ``age < hot_exchanges``, Warm-A when
    ``age < warm_a_exchanges``, Warm-B when ``age < warm_b_exchanges``, else Cold.
    Raises: ValueError if age < 0.
    """
    raise NotImplementedError("Exercise 08.1")


def timeline_line(exchange: list[dict], *, segment: str, time_seconds: float) -> str:
    """Fold an exchange (an assistant message + the user message answering it) into one line.

    Shape: ``[HH:MM] <tool> (<segment>): <input> <N> lines; <reasoning>`` where
      * HH:MM is ``time_seconds`` as UTC hours and minutes (``datetime.timezone.utc``);
      * <tool> is the name of the first tool_use (``reply`` when there is none, and then the
        part ``<input> <N> lines; `` is left out);
      * <input> is the tool_use's ``input["path"]``, else ``input["pattern"]``, else
        ``input["command"]``, else "";
      * N is the number of lines of the tool_result answering that tool_use (its
        ``tool_use_id`` is the tool_use's ``id``): the newline characters (``"\n"``) in its
        text + 1; for list content, its text parts joined as they are (images add nothing);
      * <reasoning> is the assistant's first text block (string content counts as one),
        first line only (up to the first ``"\n"``).
    The exchange is not mutated.
    Example: ``[14:30] read_file (seg-047): src/app.py 120 lines; found bug in parse()``.
    """
    raise NotImplementedError("Exercise 08.2")


def eviction_order(segments: list[dict]) -> list[str]:
    """Return segment ids in the order they are evicted: oldest insertion first.

    Each segment is ``{"id": str, "time": float, "seq": int}``; ``seq`` is the store's
    monotonic insertion counter. Order by ``seq`` only: two segments with the same ``time``
    must keep their insertion order, and a segment stored later with an EARLIER ``time``
    (a clock that stepped back) is still evicted later. Do not mutate the input.
    """
    raise NotImplementedError("Exercise 08.3")
