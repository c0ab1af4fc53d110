"""When two blocks or messages are the same to the prompt cache, decided without JSON.

The prompt cache identifies a block by the bytes sent: its JSON with ``cache_control``
removed and, as ``place_breakpoints(canonical=True)`` sends it, keys sorted
(:func:`canonical_identity`). Serialising every block of every request is what made the
reference replay slow, so the fast replay (:mod:`mini_agent.core.block_memo`) uses cheaper
stand-ins that are equal exactly when that JSON is: :func:`flat_key` for a block of scalar
values, :func:`same_message` for a policy's copy of the message it sent the request before,
and identity scans over lists (:func:`first_difference`, :func:`first_new_info`). The trap
each one avoids: ``1 == True == 1.0`` and ``0.0 == -0.0`` in Python, but they dump apart.
``tests/test_fast_replay.py`` checks them against the JSON.

Pure: no IO.
Source: the prompt caching docs as modelled in :mod:`mini_agent.core.prompt_cache` (block
identity is the bytes sent).
"""

from __future__ import annotations

import json
from itertools import compress, count
from operator import is_, is_not
from typing import Any, Sequence

from mini_agent.core.messages import Message


class Unsupported(Exception):
    """An input the fast path does not model; :func:`replay_usage` falls back to the reference."""


def compact_json(obj: Any) -> str:
    """Serialise ``obj`` as the cache sees a system block: compact, keys in their order.

    Args:
        obj: a JSON-ready value.

    Returns:
        Its JSON, non-ASCII kept, no spaces after separators.
    """
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


_FLAT_TYPES = frozenset({str, int, bool, type(None)})
"""Value types whose ``==`` within one type means the same JSON (floats are out: 0.0 == -0.0)."""

SYSTEM_MARK = object()
"""Marks the identity of a system block given by its items (no JSON needed)."""

STRING_CONTENT_MARK = object()
"""Marks the identity of a string ``content`` (one text block, keys in ``type, text`` order)."""


def flat_key(block: dict) -> tuple | None:
    """Return a hashable stand-in for the canonical JSON of a block of scalar values.

    ``(key, type, value)`` per item, sorted by key, ``cache_control`` left out: two such
    blocks have equal stand-ins exactly when :func:`canonical_identity` gives them equal
    JSON (the types keep ``True``, ``1`` and ``"1"`` apart), without serialising the block.
    Equal JSON never lands in both spaces (stand-in and JSON), since which values are
    scalars shows in the JSON itself.

    Args:
        block: a content block (a text block, a string tool_result, a mask placeholder).

    Returns:
        The stand-in, or None for a block holding a float, a list or a dict, or a key that
        is not a str: those take the JSON path.
    """
    # one pass over the items: cheaper than C-level scans that each build a set
    items = []
    add = items.append
    for key, value in block.items():
        if key == "cache_control":
            continue
        kind = type(value)
        if kind not in _FLAT_TYPES or type(key) is not str:
            return None
        add((key, kind, value))
    items.sort()   # keys are distinct strs: the sort never compares past them
    return tuple(items)


_STR_OR_NONE = frozenset({str, type(None)})


def first_difference(a: Sequence, b: Sequence) -> int:
    """Return the first index where ``a[k] is not b[k]`` (the shorter length when none).

    Args:
        a: one list (messages, or infos).
        b: another.

    Returns:
        The index, found by a C-level scan (no Python step per element).
    """
    n = min(len(a), len(b))
    if all(map(is_, a, b)):   # the usual answer, with fewer iterator objects
        return n
    return next(compress(count(), map(is_not, a, b)), n)


def same_objects(a: Sequence, b: Sequence) -> bool:
    """Tell whether two lists hold the very same objects, in the same order.

    Equal to ``len(a) == len(b) and first_difference(a, b) == len(a)``, with fewer iterator
    objects (``tests/test_block_identity.py`` compares the two).

    Args:
        a: one list (messages, or infos).
        b: another.

    Returns:
        True when ``len(a) == len(b)`` and ``a[k] is b[k]`` for every ``k`` (a C-level scan).
    """
    return len(a) == len(b) and all(map(is_, a, b))


def first_new_info(a: list, b: list) -> int:
    """Return :func:`first_difference` of two lists of infos, which equal only when identical.

    For lists of :class:`~mini_agent.core.block_memo.MessageInfo` (``eq=False``).
    List equality runs in C and, for items that compare by identity, is exactly the
    identity test: the first items are compared (a policy that changes its first message),
    then the whole common length at once (the usual case, a request that only appends), and
    otherwise it is halved until the first new info is found.

    Args:
        a: one list of infos.
        b: another.

    Returns:
        The first index where ``a[k] is not b[k]`` (the shorter length when none).
    """
    n = len(a) if len(a) < len(b) else len(b)
    if not n or a[0] is not b[0]:   # a policy that changes its first message: no scan
        return 0
    if a[:n] == b[:n]:
        return n
    lo, hi = 1, n  # a[:lo] == b[:lo]; a[lo:hi] != b[lo:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def same_message(a: Message, b: Message) -> bool:
    """Tell whether two messages surely have the same summary in the block memo.

    The summary (:class:`~mini_agent.core.block_memo.MessageInfo`) depends on the role and
    the content only, and the identities in it on the JSON with sorted keys. ``a == b`` (one
    C-level comparison) is not enough by itself: ``1 == True == 1.0`` and ``0.0 == -0.0``
    dump apart. So equal messages also need a str role and, for each block that is not the
    very same object in both, only str or None values, or bools on both sides (a mask
    placeholder, a cleared result).

    Args:
        a: a message of this request's view.
        b: the message at the same index of the previous request's view.

    Returns:
        True when the two are the same to the cache; False means "unknown", never
        "differs".
    """
    if a is b:
        return True
    if type(a) is not dict or a != b or type(a.get("role")) is not str:
        return False
    content = a.get("content")
    if type(content) is str:
        return True
    if type(content) is not list:
        return False
    other = b["content"]
    k = len(content)
    while k:  # an index loop: no iterator objects for the usual one-block message
        k -= 1
        block = content[k]
        if block is not other[k]:
            if type(block) is not dict:
                return False
            if _STR_OR_NONE.issuperset(map(type, block.values())):  # the usual: C-level
                continue
            for key, value in block.items():  # a str, None, or a bool on both sides
                kind = type(value)
                if kind is not str and value is not None and (
                        kind is not bool or type(other[k][key]) is not bool):
                    return False
    return True


def _strip(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k != "cache_control"}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    if isinstance(obj, tuple):
        raise Unsupported("a tuple inside a block")
    return obj


def canonical_identity(block: dict) -> str:
    """Return the block's JSON as ``prefix_boundaries`` sees it after canonical placement.

    Args:
        block: a content block; never mutated.

    Returns:
        Its JSON with sorted keys and every ``cache_control`` removed, as sent by
        ``place_breakpoints(canonical=True)``.

    Raises:
        Unsupported: a tuple inside the block (JSON would send it as a list).
    """
    text = json.dumps(block, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    if '"cache_control"' in text:
        text = json.dumps(_strip(block), ensure_ascii=False, separators=(",", ":"),
                          sort_keys=True)
    return text


