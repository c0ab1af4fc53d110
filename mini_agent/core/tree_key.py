"""A hashable stand-in for the canonical JSON of a block holding nested dicts and lists.

The fast replay knows a block by its JSON as the prompt cache sees it (sorted keys, every
``cache_control`` key removed: ``block_identity.canonical_identity``). A block of scalar
values takes ``block_identity.flat_key``; a tool_use block holds its ``input`` dict, so it
used to be dumped to JSON (escaping every character of the input) and the JSON hashed.
:func:`tree_key` builds the same kind of stand-in one level deeper: ``(key, type, value)``
per item, sorted by key, where a dict or list value is itself such a stand-in. Two blocks get
equal stand-ins exactly when their canonical JSON is equal: the types keep ``True``, ``1``
and ``"1"`` apart, and floats (``0.0 == -0.0`` and NaN, which dump apart or equal), tuples
and keys that are not str are left to the JSON (None). A stand-in always holds a dict or
list item, so it never equals a ``flat_key`` (scalars only), and it is a tuple, never equal
to a JSON str. ``tests/test_tree_key.py`` checks it against the JSON.

Pure: no IO, inputs never mutated.
Source: the prompt caching docs as modelled in :mod:`mini_agent.core.prompt_cache` (block
identity is the bytes sent).
"""

from __future__ import annotations

from typing import Any

_SCALARS = frozenset({str, int, bool, type(None)})
"""Value types whose ``==`` within one type means the same JSON."""


class _NotModelled(Exception):
    """A value the stand-in leaves to the JSON (a float, a tuple, a key that is not a str)."""


def tree_key(block: dict) -> tuple | None:
    """Return a hashable stand-in for ``canonical_identity(block)``, or None.

    Args:
        block: a content block (a dict); never mutated.

    Returns:
        ``(key, type, value or nested stand-in)`` per item except ``cache_control``, sorted by
        key, nested dicts likewise and lists as tuples of ``(type, value or stand-in)``; None
        when the block holds a float, a tuple, another type or a key that is not a str
        anywhere (those take the JSON path).
    """
    try:
        return _dict_key(block)
    except _NotModelled:
        return None


def _dict_key(obj: dict) -> tuple:
    items = []
    for key, value in obj.items():
        if type(key) is not str:
            raise _NotModelled
        if key == "cache_control":   # removed at every depth, as canonical_identity does
            continue
        kind = type(value)
        items.append((key, kind, value if kind in _SCALARS else _nested(value, kind)))
    items.sort()  # keys are distinct strs: the sort never compares past them
    return tuple(items)


def _nested(value: Any, kind: type) -> tuple:
    if kind is dict:
        return _dict_key(value)
    if kind is list:
        return tuple((type(v), v if type(v) in _SCALARS else _nested(v, type(v)))
                     for v in value)
    raise _NotModelled
