"""Build a frozen dataclass's instance from its fields at once, for rows made by the thousand.

A frozen dataclass's ``__init__`` sets each field with ``object.__setattr__`` (one call per
field, to get past its own ``__setattr__`` that refuses changes). :func:`frozen_row` makes the
same object with one call: a new instance whose ``__dict__`` is the given fields. Used where a
report builds one small row per request or per fact (``calibration.RequestEstimate``,
``retention.Fact``); their tests compare the rows with the dataclass's own.
Pure: no IO.

Source: Python's ``dataclasses`` docs (frozen instances, ``object.__setattr__`` in
``__init__``).
"""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")

_new_object, _set_attribute = object.__new__, object.__setattr__


def frozen_row(cls: type[T], fields: dict[str, Any]) -> T:
    """Return ``cls(**fields)`` without the frozen ``__init__``'s per-field calls.

    Args:
        cls: a frozen dataclass with no ``__post_init__``, no defaults to fill and no
            ``__slots__``.
        fields: every field, in the class's field order (the ``__dict__`` ``__init__`` would
            make); kept as the instance's ``__dict__``, so pass a new dict.

    Returns:
        The instance, equal to ``cls(**fields)`` in value, hash, repr and pickling.
    """
    row = _new_object(cls)
    _set_attribute(row, "__dict__", fields)
    return row
