"""ALTERNATIVE (correct, written differently): a while loop with a counter for decoding, a regex for forbidden characters (invisible ones listed by code point), a depth walk over pre-filtered names.
"""

import re
import unicodedata
from urllib.parse import unquote

from mini_agent import MemoryPathError

SAME_AS = frozenset("/\\.")
CONFUSABLE = frozenset(
    "\u2215\u2044\u29f8\u29f9\u2216\u29f5\u2571\u2572\u244a\u3033\u30fb\u2cc1"
    "\u01c0\u2223\uff5c\u00b7\u2027\u2219\u22c5\u0701\u0702\u3002\uff61\u0338")
FORBIDDEN = re.compile(
    r"[\x00-\x1f\x7f-\x9f\\\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


def decode_until_stable(text, *, max_rounds=8):
    rounds = 0
    while True:
        try:
            nxt = unquote(text, errors="strict")
        except UnicodeDecodeError as exc:
            raise MemoryPathError(str(exc)) from None
        if nxt == text:
            return nxt
        rounds += 1
        if rounds > max_rounds - 1 and unquote(nxt) != nxt:
            raise MemoryPathError("too many encoding layers")
        text = nxt


def is_lookalike(char):
    if char in SAME_AS:
        return False
    return char in CONFUSABLE or not SAME_AS.isdisjoint(unicodedata.normalize("NFKC", char))


def validate_memory_path(path, *, max_path_chars=255):
    if type(path) is not str or len(path) > max_path_chars:
        raise MemoryPathError("not a path of at most max_path_chars characters")
    plain = decode_until_stable(path)
    if FORBIDDEN.search(path) or FORBIDDEN.search(plain) \
            or any(is_lookalike(c) for c in set(path) | set(plain)):
        raise MemoryPathError("forbidden character")
    head, sep, rest = plain.partition("/memories")
    if head or (rest and not rest.startswith("/")) or not sep:
        raise MemoryPathError("outside /memories")
    kept = []
    for name in (n for n in rest.split("/") if n not in ("", ".")):
        if name != "..":
            if len(name.encode()) > 255:
                raise MemoryPathError("name too long")
            kept.append(name)
        elif kept:
            kept.pop()
        else:
            raise MemoryPathError("climbs above /memories")
    return "/memories" + "".join("/" + n for n in kept)
