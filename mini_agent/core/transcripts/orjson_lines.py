"""Read the usual JSONL lines with ``orjson`` where its answer is provably ``json.loads``'s.

Parsing is half of loading a Claude Code session: on the kit's generated sessions (about
55 kB in 36 lines) the line reader of :func:`.claude_code.parse_jsonl`, which runs the
scanner ``json.loads`` runs, costs about 1.7M instructions per file, ``orjson.loads`` on the
same lines about 0.7M (0.156 ms against 0.051 ms per line measured with a wall clock).
:func:`orjson_prefix` reads the lines with ``orjson``; ``parse_jsonl`` keeps what it read
only where it is what ``json.loads`` reads, and reads everything else as before.

Where the two differ, and how each difference is closed:

* what ``orjson`` refuses and ``json.loads`` reads (``NaN``, ``Infinity``, ``-Infinity``, a
  number past the float range such as ``1e400``, a lone surrogate, escaped or in the text),
  and every line that is not JSON: :func:`orjson_prefix` stops at that line, and the
  plain reader reads it and every line after it (its repair messages unchanged);
* an integer outside ``[-2**63, 2**64)``: ``orjson`` gives a float. Any float of that size
  anywhere in the lines read (:func:`value_levels` looks) sends them to the plain reader;
* nesting: ``orjson`` 3.9.15 and later refuse a value nested deeper than 1,024 levels
  (older versions overflow the C stack and are not used); ``json.loads`` refuses past what
  is left of Python's recursion limit. ``parse_jsonl`` has the plain scanner read a list
  nested as deep as the lines have levels, from the same call depth, before it keeps them;
* a line that starts with anything but ``{`` (leading whitespace, a list, a scalar) or
  holds only whitespace the way ``str.strip`` sees it: as for a bad line, or skipped;
* the rest are the same in both (``tests/test_orjson_lines.py`` checks): duplicate keys
  (first position, last value), whitespace around values, ``-0.0``, ``5e-324``, 17
  significant digits, ``"\\u0000"``, characters beyond the BMP, a byte order mark (both
  refuse it inside a line).

Without ``orjson`` installed (or an older one) :data:`LOADS` is None and every file is read
by the plain reader. Pure: text in, values out; ``orjson`` is a parser, it does no IO.

Source:
    ``orjson`` (https://github.com/ijl/orjson): integers past 64 bits load as floats (issue
    308), the nesting limit came with 3.9.15 (CVE-2024-27454); CPython's ``json`` module.
"""

from __future__ import annotations

import gc
import re
from typing import Any, Callable

__all__ = ["LOADS", "orjson_prefix", "value_levels"]

_FIRST_SAFE_VERSION = (3, 9, 15)
"""The first ``orjson`` whose ``loads`` refuses a value nested past 1,024 levels."""

_BIG = 2.0 ** 63
"""The smallest float magnitude an integer outside orjson's 64-bit range can load as."""

_referents = gc.get_referents
"""The values of dicts and the items of lists, gathered by the interpreter for all of them
at once (CPython's ``dict`` and ``list`` traversals visit every value, in no set order;
checked at import)."""


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def _referents_are_values(loads: Callable[[str], Any]) -> bool:
    """Whether ``gc.get_referents`` gives every value of a parsed dict and list (in any
    order: CPython visits a list's items last first)."""
    probe = loads('{"a": 1.5, "b": [2.5, {"c": 3}, null, 7], "d": "x", "e": true}')
    items = probe["b"]
    return (sorted(map(id, _referents(probe))) == sorted(map(id, probe.values()))
            and sorted(map(id, _referents(items))) == sorted(map(id, items)))


def _usable_loads() -> Callable[[str], Any] | None:
    try:
        import orjson
    except ImportError:
        return None
    if _version(getattr(orjson, "__version__", "0")) < _FIRST_SAFE_VERSION:
        return None
    return orjson.loads if _referents_are_values(orjson.loads) else None


LOADS = _usable_loads()
"""``orjson.loads`` when a usable ``orjson`` is installed (3.9.15 or later), else None."""


def orjson_prefix(text: str) -> tuple[list[tuple[int, dict]], int, int]:
    """Read JSONL lines with ``orjson`` up to the first line it cannot take.

    A line is taken when it starts with ``{`` and ``orjson`` reads it (a dict); a line that
    ``str.strip`` leaves empty is skipped, as :func:`.claude_code.parse_jsonl` skips it.

    Args:
        text: the file's text; :data:`LOADS` must not be None.

    Returns:
        ``(entries, start, index)``: the ``(line_number, entry)`` pairs read, then the
        offset in ``text`` and the 0-based index of the first line not taken, or
        ``(entries, -1, index)`` when every line was.
    """
    loads = LOADS
    entries = []
    append = entries.append
    find = text.find
    start, i = 0, 0
    while True:
        newline = find("\n", start)
        if text.startswith("{", start):
            try:
                entry = loads(text[start:newline] if newline >= 0 else text[start:])
            except ValueError:  # orjson.JSONDecodeError: not JSON, or not as json reads it
                return entries, start, i
            append((i + 1, entry))
        elif (text[start:newline] if newline >= 0 else text[start:]).strip():
            return entries, start, i
        if newline < 0:
            return entries, -1, i
        start, i = newline + 1, i + 1


def value_levels(values: list[Any]) -> int | None:
    """How many levels ``values`` have, or None if a float of 2**63 or more is in them.

    The first level is ``values`` themselves, the next their dicts' values and lists'
    items, and so on until a level holds no dict or list: ``[{"a": [1]}]`` has 3 levels
    (the dict, the list, the 1), ``[{}]`` and ``[1]`` one each. A value nested ``n``
    containers deep has at least ``n`` levels.

    Shapes: ``values`` are what ``orjson`` read (dicts, lists, str, int, float, bool, None).

    Args:
        values: the parsed values; never changed.

    Returns:
        The number of levels, or None when some float in them has a magnitude of ``2**63``
        or more: it may be an integer ``json.loads`` reads exactly, so the lines must be read
        again.
    """
    count = 0
    level = values
    while level:
        count += 1
        if float in map(type, level):
            for value in level:
                if type(value) is float and not -_BIG < value < _BIG:
                    return None
        level = _referents(*level)
    return count
