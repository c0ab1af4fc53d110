"""Tell a Claude Code session's usual shape, one unbroken chain, in C-level passes.

Most Claude Code files the kit loads hold message entries only, each one's ``parentUuid``
the uuid of the line before it. For them the full walk of
:func:`mini_agent.core.transcripts.claude_code.claude_code_drafts` (clean the ids, index
by uuid, follow the parent links) takes every entry and changes nothing; :func:`linear_chain`
proves the shape with ``itemgetter``, ``map`` and ``zip`` passes and gives the walk's answer,
or None when the file is not so (then the walk runs as before).

Pure; reads the entries, never changes them.

Source:
    the Claude Code entry fields (``type``, ``uuid``, ``parentUuid``, ``isSidechain``,
    ``logicalParentUuid``, ``message.id``) as :mod:`.claude_code` reads them.
"""

from __future__ import annotations

import operator
from itertools import repeat
from typing import Any

__all__ = ["linear_chain"]

_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)
_LINK_FIELDS = operator.itemgetter("type", "uuid", "parentUuid", "isSidechain", "message")
_MESSAGE_KINDS = frozenset(("user", "assistant"))
_DICT_ONLY, _STR_ONLY, _ID_TYPES_SET = {dict}, {str}, frozenset((str, type(None)))


def linear_chain(entries: list[tuple[int, dict]]
                 ) -> tuple[list[tuple[int, dict, Any, dict, bool]], set] | None:
    """Answer the chain walk of ``claude_code._follow_chain`` for the usual file.

    The usual file: every entry a ``user`` or ``assistant`` entry with a dict ``message``
    (its ``id`` a str or missing), a falsy ``isSidechain``, no ``logicalParentUuid``, and
    distinct str uuids, each entry's ``parentUuid`` the uuid of the entry before it (the
    first's None). The walk then takes every entry, skips none, repairs nothing and finds no
    compaction; this answers so with C-level passes (``itemgetter``, ``map``, ``zip``)
    instead of reading each entry's fields in a Python loop.
    ``tests/test_claude_code_chain.py`` compares the two on generated entries.

    Args:
        entries: ``(line_number, entry)`` pairs from ``claude_code.parse_jsonl``.

    Returns:
        ``(candidates, chain)`` as ``_follow_chain`` gives them for the usual file (every
        entry a candidate, every uuid on the chain); None for any other file.
    """
    try:
        es = list(map(_SECOND, entries))
        kinds, uuids, parents, sides, messages = zip(*map(_LINK_FIELDS, es))
        if not (_MESSAGE_KINDS.issuperset(kinds) and not any(sides)
                and set(map(type, messages)) == _DICT_ONLY
                and set(map(type, uuids)) == _STR_ONLY and parents[0] is None
                and parents[1:] == uuids[:-1] and len(chain := set(uuids)) == len(uuids)
                and _ID_TYPES_SET.issuperset(map(type, map(dict.get, messages,
                                                           repeat("id"))))
                and not any(map(operator.contains, es, repeat("logicalParentUuid")))):
            return None
    except (KeyError, TypeError, ValueError):  # a field missing, an unhashable type...
        return None
    candidates = list(zip(map(_FIRST, entries), es, uuids, messages,
                          map(operator.eq, kinds, repeat("assistant"))))
    return candidates, chain
