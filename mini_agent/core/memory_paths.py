"""Validate a memory tool path: everything the model sends must stay inside ``/memories``.

Claude's memory tool (``memory_20250818``) runs on the client: the model asks for
``view``/``create``/``str_replace``/``insert``/``delete``/``rename`` on paths such as
``/memories/notes/project.md`` and the application decides where they live. The docs ask the
application to normalise every path and refuse anything that leaves ``/memories``. This module
does that for the *text* of a path, with no filesystem: :func:`validate_memory_path` returns the
normalised virtual path or raises :class:`MemoryPathError` whose message tells the model what
to send instead. Symlinks (a property of the disk, not of the text) are checked by
``mini_agent.harness.memory``.

What it refuses, each a trick seen in path traversal attacks:

* leaving the root: ``/memories/../x``, ``/etc/passwd``, ``memories/x`` (not absolute),
  the prefix trick ``/memoriesX/a`` (a string prefix is not a directory prefix);
* percent-encoding, decoded until stable (``%252e%252e`` is ``%2e%2e`` once, ``..`` twice);
* backslashes (a separator on Windows, an escape elsewhere), NUL and other control characters;
* invisible formatting characters (Unicode category "Cf"): bidi controls such as U+202E
  RIGHT-TO-LEFT OVERRIDE (``notes\\u202etxt.md`` displays as ``notesdm.txt``) and zero-width
  characters such as U+200B (two names that display alike but are different files);
* Unicode look-alikes of ``/``, ``\\`` and ``.``: characters NFKC folds into them (U+FF0F
  FULLWIDTH SOLIDUS, U+2024 ONE DOT LEADER, U+FF0E FULLWIDTH FULL STOP...) and confusables
  NFKC leaves alone (U+2215 DIVISION SLASH, U+2044 FRACTION SLASH, U+29F8 BIG SOLIDUS...);
* over-long paths and names.

Does not: touch the disk, follow symlinks, or decide size caps and secrets (the harness does).
Taught in ``notebooks/09_memory_and_subagents.ipynb``; exercise 09 is this function.
Source: 004_b74ef821c58ee4ec.txt (memory tool: normalise every path, refuse anything outside
/memories); Anthropic memory tool docs ("Security considerations: path traversal").
"""

from __future__ import annotations

import unicodedata
from urllib.parse import unquote

MEMORY_ROOT = "/memories"
"""The virtual directory the memory tool works in (the model sees only this)."""

MAX_PATH_CHARS = 255
"""Longest path accepted, in characters, counted as sent (before any decoding)."""

MAX_NAME_BYTES = 255
"""Longest single name (one path component) in UTF-8 bytes: NAME_MAX of common filesystems."""

MAX_DECODE_ROUNDS = 8
"""Percent-decoding rounds before a path that keeps changing is refused as hostile."""

LOOKALIKES = frozenset(
    "\u2215\u2044\u29f8\u29f9\u2216\u29f5\u2571\u2572\u244a\u3033\u30fb\u2cc1"
    "\u01c0\u2223\uff5c\u00b7\u2027\u2219\u22c5\u0701\u0702\u3002\uff61\u0338")
"""Characters that look like ``/``, ``\\`` or ``.`` and that NFKC does NOT fold into them
(division slash, fraction slash, big solidus, set minus, box-drawing diagonals, middle dots,
ideographic full stops...). Characters NFKC folds into ``/ \\ .`` are caught by NFKC itself."""

INVISIBLES = frozenset(
    "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    "\u200b\u200c\u200d\u2060\ufeff")
"""The best-known invisible formatting characters: bidi marks, embeddings, overrides and
isolates (U+200E/F, U+061C, U+202A-U+202E, U+2066-U+2069) and zero-width characters (U+200B-
U+200D, U+2060 WORD JOINER, U+FEFF). All are of Unicode category "Cf", which
:func:`validate_memory_path` refuses as a whole (soft hyphen U+00AD and tag characters
U+E0000-U+E007F too)."""

_SEPARATORS = frozenset("/\\.")


class MemoryPathError(ValueError):
    """A memory path that is refused; the message says why and what to send instead."""


def _refuse(path: str, why: str) -> MemoryPathError:
    return MemoryPathError(f"refused memory path {path!r}: {why}. Use a path under "
                           f"{MEMORY_ROOT}/ made of plain names separated by '/', "
                           f"e.g. {MEMORY_ROOT}/notes/project.md")


def decode_until_stable(text: str, *, max_rounds: int = MAX_DECODE_ROUNDS) -> str:
    """Percent-decode ``text`` repeatedly until it stops changing.

    Args:
        text: the path as sent.
        max_rounds: decoding rounds allowed (a count).
    Returns:
        The decoded text (``"%252e"`` -> ``"%2e"`` -> ``"."``).
    Raises:
        MemoryPathError: still changing after ``max_rounds`` rounds, or escapes that do not
        decode to UTF-8 (``%ff``).

    >>> decode_until_stable("/memories/%252e%252e")
    '/memories/..'
    """
    for _ in range(max_rounds + 1):  # the last round only confirms stability
        try:
            decoded = unquote(text, errors="strict") if "%" in text else text
        except UnicodeDecodeError:
            raise _refuse(text, "its percent-escapes are not UTF-8") from None
        if decoded == text:
            return text
        text = decoded
    raise _refuse(text, f"it is still percent-encoded after {max_rounds} decoding rounds")


def is_lookalike(char: str) -> bool:
    """Tell whether a character passes for a path separator or dot without being one.

    Args:
        char: one character.

    Returns:
        True if ``char`` is not one of ``/ \\ .`` but looks like one (NFKC or a confusable).

    >>> is_lookalike("\\uff0f"), is_lookalike("\\u2215"), is_lookalike("/"), is_lookalike("a")
    (True, True, False, False)
    """
    if char in _SEPARATORS:
        return False
    return char in LOOKALIKES or bool(set(unicodedata.normalize("NFKC", char)) & _SEPARATORS)


def validate_memory_path(path: str, *, max_path_chars: int = MAX_PATH_CHARS) -> str:
    """Return the normalised form of a memory path, or refuse it.

    Accepted: ``/memories`` itself or a path under it, with names separated by ``/``.
    Percent-encoding is decoded until stable (``%20`` is a space, ``%252e`` is ``.``) before
    anything else is judged; ``.`` components and empty components (``//``) are dropped; a
    ``..`` removes the name before it, and a ``..`` that would climb above ``/memories`` is
    refused. The result has no trailing slash and no ``.``/``..``/empty components.

    Args:
        path: the path the model sent (str).
        max_path_chars: longest accepted path in characters, counted as sent.
    Returns:
        The normalised path, e.g. ``"/memories/a/b.md"`` for ``"/memories/a/./x/../b.md"``.
    Raises:
        MemoryPathError (a ValueError): not a str; longer than ``max_path_chars``; a name
        longer than MAX_NAME_BYTES bytes; still encoded after MAX_DECODE_ROUNDS rounds; a NUL
        or other control character, an invisible formatting character (category "Cf":
        bidi controls, zero-width characters, see INVISIBLES), a backslash or a look-alike
        of ``/ \\ .`` (before or after decoding); not ``/memories`` or under
        ``/memories/`` (``/memoriesX`` is outside); a ``..`` climbing above ``/memories``.
    Source:
        004_b74ef821c58ee4ec.txt; Anthropic memory tool docs, "path traversal protection".

    >>> validate_memory_path("/memories/a/./x/../b.md")
    '/memories/a/b.md'
    """
    if not isinstance(path, str):
        raise _refuse(str(path)[:40], f"it is of type {type(path).__name__}, not a string")
    if len(path) > max_path_chars:
        raise _refuse(path[:40] + "...", f"it is {len(path)} characters long; the limit is "
                                         f"{max_path_chars}")
    decoded = decode_until_stable(path)
    for text in (path, decoded):
        for char in text:
            category = unicodedata.category(char)
            if category == "Cc":
                raise _refuse(path, f"it contains the control character U+{ord(char):04X}")
            if category == "Cf":
                raise _refuse(path, f"it contains U+{ord(char):04X} "
                                    f"({unicodedata.name(char, 'unnamed')}), an invisible "
                                    "formatting character: the path would display as "
                                    "something it is not")
            if char == "\\":
                raise _refuse(path, "it contains a backslash; the separator is '/'")
            if is_lookalike(char):
                raise _refuse(path, f"it contains U+{ord(char):04X} "
                                    f"({unicodedata.name(char, 'unnamed')}), which looks like "
                                    "'/' or '.' but is not")
    if decoded != MEMORY_ROOT and not decoded.startswith(MEMORY_ROOT + "/"):
        raise _refuse(path, f"it is not {MEMORY_ROOT} or under {MEMORY_ROOT}/")
    names: list[str] = []
    for name in decoded[len(MEMORY_ROOT):].split("/"):
        if name in ("", "."):
            continue
        if name == "..":
            if not names:
                raise _refuse(path, f"'..' climbs above {MEMORY_ROOT}")
            names.pop()
            continue
        if len(name.encode("utf-8")) > MAX_NAME_BYTES:
            raise _refuse(path, f"a name is longer than {MAX_NAME_BYTES} bytes")
        names.append(name)
    return "/".join([MEMORY_ROOT, *names])


def nfc_memory_path(path: str) -> str:
    """Put a validated memory path in Unicode form NFC and check it again.

    NFC makes ``café`` with a combining accent (NFD) and with a precomposed one one name; it
    may lengthen a name past MAX_NAME_BYTES (U+0958 is 3 bytes, its NFC 6) or bring out a
    look-alike (U+2ADC ends in U+0338), so the checks run again; the length in characters
    stays the one counted as sent.

    Args:
        path: a path :func:`validate_memory_path` returned.
    Returns:
        The path in NFC.
    Raises:
        MemoryPathError: the NFC form breaks a rule the path as sent kept.

    >>> nfc_memory_path("/memories/cafe\u0301.md") == "/memories/caf\u00e9.md"
    True
    """
    form = unicodedata.normalize("NFC", path)
    return validate_memory_path(form, max_path_chars=len(form))
