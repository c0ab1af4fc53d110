"""ALTERNATIVE (correct, written differently): recursive decoding, PurePosixPath parts, a ValueError subclass of its own, code-point ranges instead of unicodedata.category for control characters, the category tuple ("Cf",) for invisible ones.
"""

import unicodedata
from pathlib import PurePosixPath
from urllib.parse import unquote


class Refused(ValueError):
    pass


LOOKS_LIKE = set("\u2215\u2044\u29f8\u29f9\u2216\u29f5\u2571\u2572\u244a\u3033\u30fb\u2cc1"
                 "\u01c0\u2223\uff5c\u00b7\u2027\u2219\u22c5\u0701\u0702\u3002\uff61\u0338")


def decode_until_stable(text, *, max_rounds=8):
    try:
        once = unquote(text, errors="strict")
    except UnicodeDecodeError:
        raise Refused("bad escape") from None
    if once == text:
        return text
    if max_rounds <= 0:
        raise Refused("still encoded")
    return decode_until_stable(once, max_rounds=max_rounds - 1) if max_rounds > 1 \
        else _last(once)


def _last(text):
    if unquote(text) != text:
        raise Refused("still encoded")
    return text


def is_lookalike(char):
    folded = unicodedata.normalize("NFKC", char)
    return char not in "/\\." and (char in LOOKS_LIKE or any(c in "/\\." for c in folded))


def _bad(char):
    return (ord(char) < 0x20 or 0x7f <= ord(char) <= 0x9f or char == "\\" or is_lookalike(char)
            or unicodedata.category(char) in ("Cf",))


def validate_memory_path(path, *, max_path_chars=255):
    if not isinstance(path, str):
        raise Refused("not a string")
    if len(path) > max_path_chars:
        raise Refused("too long")
    decoded = decode_until_stable(path)
    if any(map(_bad, path)) or any(map(_bad, decoded)):
        raise Refused("bad character")
    if not (decoded == "/memories" or decoded.startswith("/memories/")):
        raise Refused("outside")
    out = []
    for part in PurePosixPath(decoded).parts[2:]:
        if part == "..":
            if not out:
                raise Refused("climbs out")
            out.pop()
        elif part != ".":
            if len(part.encode("utf-8")) > 255:
                raise Refused("long name")
            out.append(part)
    return str(PurePosixPath("/memories", *out))
