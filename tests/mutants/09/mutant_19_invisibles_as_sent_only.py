"""MUTANT (wrong on purpose): Looks for invisible formatting characters only in the path as sent; exposed by /memories/notes%E2%80%AEtxt.md (an encoded U+202E) is accepted.

Exercise 09: memory path validation (notebooks/09_memory_and_subagents.ipynb).

Claude's memory tool runs on YOUR side: the model sends paths such as
``/memories/notes/project.md`` and your code decides what they mean on disk. Every path must
be normalised and refused when it leaves ``/memories``.

* 09.1 ``decode_until_stable(text, *, max_rounds=8)``: percent-decode until nothing changes;
* 09.2 ``is_lookalike(char)``: a character that looks like ``/``, ``\\`` or ``.`` but is not;
* 09.3 ``validate_memory_path(path, *, max_path_chars=255)``: the normalised path, or a
  refusal (``MemoryPathError``, a ``ValueError``) with a message saying what to send instead.

Grade with ``mini-agent grade 09``. The kit's own version is ``mini_agent.core.memory_paths``.
Source: the memory tool of the course chapter on context, memory and state (seed 004; see
docs/sources.md in the kit): normalise every path, refuse what leaves /memories.
"""

from __future__ import annotations

import unicodedata
from urllib.parse import unquote

from mini_agent import MemoryPathError

MEMORY_ROOT = "/memories"
MAX_NAME_BYTES = 255
LOOKALIKES = frozenset(
    "\u2215\u2044\u29f8\u29f9\u2216\u29f5\u2571\u2572\u244a\u3033\u30fb\u2cc1"
    "\u01c0\u2223\uff5c\u00b7\u2027\u2219\u22c5\u0701\u0702\u3002\uff61\u0338")
"""Look-alikes of ``/ \\ .`` that NFKC leaves alone (division slash U+2215, fraction slash
U+2044, big solidus U+29F8...)."""
INVISIBLES = frozenset(
    "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    "\u200b\u200c\u200d\u2060\ufeff")
"""Invisible formatting characters (all of Unicode category "Cf"): bidi marks, overrides and
isolates (U+202E RIGHT-TO-LEFT OVERRIDE makes ``notes\\u202etxt.md`` display as
``notesdm.txt``) and zero-width characters (U+200B ZERO WIDTH SPACE, U+FEFF...)."""


def decode_until_stable(text: str, *, max_rounds: int = 8) -> str:
    """Percent-decode ``text`` (``urllib.parse.unquote``) until it stops changing.

    ``"%252e"`` decodes to ``"%2e"``, then to ``"."``, then stays ``"."``.
    Returns: the stable text. Raises: MemoryPathError (a ValueError) when it still changes
    after ``max_rounds`` decodings, or when escapes do not decode to UTF-8 (``%ff``).
    """
    for _ in range(max_rounds + 1):  # the last round only confirms stability
        try:
            decoded = unquote(text, errors="strict")
        except UnicodeDecodeError:
            raise MemoryPathError(f"{text!r}: percent-escapes that are not UTF-8") from None
        if decoded == text:
            return text
        text = decoded
    raise MemoryPathError(f"{text!r} is still encoded after {max_rounds} rounds")


def is_lookalike(char: str) -> bool:
    """True if ``char`` is not ``/``, ``\\`` or ``.`` but looks like one of them.

    Look-alikes are the characters in LOOKALIKES and every character whose NFKC form
    (``unicodedata.normalize("NFKC", char)``) contains ``/``, ``\\`` or ``.`` (U+FF0F
    FULLWIDTH SOLIDUS, U+2024 ONE DOT LEADER, U+FF0E FULLWIDTH FULL STOP...).
    """
    if char in "/\\.":
        return False
    return char in LOOKALIKES or any(c in "/\\." for c in unicodedata.normalize("NFKC", char))


def validate_memory_path(path: str, *, max_path_chars: int = 255) -> str:
    """Return the normalised form of a memory path, or raise MemoryPathError.

    In this order:
    1. refuse a non-str, and a path longer than ``max_path_chars`` characters as sent;
    2. decode it with ``decode_until_stable``;
    3. refuse if the path as sent or decoded contains a control character (Unicode category
       "Cc": NUL, newline...), an invisible formatting character (category "Cf": the
       INVISIBLES and the like), a backslash, or a look-alike (``is_lookalike``);
    4. refuse unless the decoded path is ``/memories`` or starts with ``/memories/``;
    5. walk the names after ``/memories``: skip empty names and ``.``; ``..`` removes the
       previous name, and is refused when there is none (it would climb above /memories);
       refuse a name longer than 255 UTF-8 bytes;
    6. return ``"/memories"`` joined with the remaining names by ``/`` (no trailing slash).

    Examples: ``"/memories/a/./x/../b.md"`` -> ``"/memories/a/b.md"``;
    ``"/memories/%252e%252e/x"`` is refused (it decodes to ``/memories/../x``).
    """
    if not isinstance(path, str):
        raise MemoryPathError(f"expected a string path, got {type(path).__name__}")
    if len(path) > max_path_chars:
        raise MemoryPathError(f"path of {len(path)} characters; the limit is {max_path_chars}")
    decoded = decode_until_stable(path)
    for char in path + decoded:
        if unicodedata.category(char) == "Cf" and char in path:
            raise MemoryPathError(f"{path!r}: U+{ord(char):04X} is invisible")
        if unicodedata.category(char) == "Cc" or char == "\\" or is_lookalike(char):
            raise MemoryPathError(f"{path!r}: U+{ord(char):04X} is not allowed in a path")
    if decoded != MEMORY_ROOT and not decoded.startswith(MEMORY_ROOT + "/"):
        raise MemoryPathError(f"{path!r} is not under {MEMORY_ROOT}/")
    names: list[str] = []
    for name in decoded[len(MEMORY_ROOT):].split("/"):
        if name in ("", "."):
            continue
        if name == "..":
            if not names:
                raise MemoryPathError(f"{path!r} climbs above {MEMORY_ROOT}")
            names.pop()
        elif len(name.encode("utf-8")) > MAX_NAME_BYTES:
            raise MemoryPathError(f"{path!r}: a name is longer than {MAX_NAME_BYTES} bytes")
        else:
            names.append(name)
    return "/".join([MEMORY_ROOT, *names])
