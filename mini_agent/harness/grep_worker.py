"""The grep tool's search, run as a child process the tool can kill at its time limit.

Python's ``re`` holds the GIL while it matches, so a pattern that backtracks catastrophically
(``(a+)+$`` on a long run of ``a``) cannot be stopped by a thread; a process can be killed.
:mod:`mini_agent.harness.grep_tool` starts ``python -I -S grep_worker.py`` (stdlib only, so
it starts in about 25 ms), writes one JSON request to its stdin and reads JSON lines back:
``["f", i]`` when file ``i`` starts (so a killed search can name where it was), ``["h", i,
line_number, text]`` for each hit shown, and one closing ``["s", stats]``; each record is
flushed as it is written, so a killed search still shows its hits.

Files are read in blocks and searched line by line, each line in at most ``line_bytes``
bytes (the rest of a longer line is skipped, not searched, and counted), so memory stays
bounded whatever the file size. Lines end at ``\\n`` only (as ``grep -n`` and ``sed`` count
them), a trailing ``\\r`` is dropped (CRLF files), bytes that are not UTF-8 are searched as
U+FFFD, and a file with a NUL byte in its first 8 KiB is skipped as binary (like
``grep -I``).

IO: files, stdin/stdout.

Source:
    002_4516104fd432e704.txt (the Grep tool of the Read/Grep/Glob split); Python's ``re``
    documentation (backtracking engine, GIL held while matching).
"""

from __future__ import annotations

import codecs
import io
import json
import re
import sys
from collections.abc import Callable, Iterator

BINARY_SNIFF_BYTES = 8_192
"""A file holding a NUL byte in its first this many bytes is skipped as binary (grep -I)."""


def _hit_text(line: str, match: re.Match[str], hit_chars: int) -> str:
    """Cut a long hit line to about ``hit_chars`` characters around the match, saying so."""
    if len(line) <= hit_chars:
        return line
    start = max(match.start() - hit_chars // 4, 0)
    piece = line[start:start + hit_chars]
    return (f"{piece} [line cut to {len(piece):,} of {len(line):,} characters, "
            f"match at column {match.start() + 1:,}]")


def _decode(data: bytes, final: bool = True) -> tuple[str, bool]:
    """Decode UTF-8, bad bytes as U+FFFD; ``final=False`` keeps a cut last character out.

    Returns:
        ``(text, held bytes that are not UTF-8)``.
    """
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(data, final), False
    except UnicodeDecodeError:
        return codecs.getincrementaldecoder("utf-8")("replace").decode(data, final), True


def search_file(f: io.BufferedReader, search: Callable[[str], re.Match[str] | None],
                line_bytes: int, stats: dict[str, int]
                ) -> Iterator[tuple[int, str, re.Match[str]]]:
    """Search one open file line by line, reading it in blocks of ``line_bytes``.

    Each block's whole lines are decoded at once and split at ``\\n`` (3 to 4 times faster
    than a ``readline`` per line); a line longer than ``line_bytes`` is searched in its first
    ``line_bytes`` bytes and the rest is skipped unread into memory.

    Args:
        f: the file, opened in binary mode at its start.
        search: the compiled pattern's ``search``.
        line_bytes: the most bytes of one line that are searched (and the block size).
        stats: counters updated in place: ``long_lines`` (lines cut at ``line_bytes``),
            ``not_utf8_files`` (files holding bytes that are not UTF-8).

    Yields:
        ``(line_number, line, match)`` for each line that matches, line numbers from 1, the
        line without its ``\\r\\n`` or ``\\n``.
    """
    n, carry, skipping, bad_utf8 = 0, b"", False, False
    while block := f.read(line_bytes):
        if skipping:  # inside the rest of a long line
            cut = block.find(b"\n")
            if cut < 0:
                continue
            block, skipping = block[cut + 1:], False
        data = carry + block
        first = data.find(b"\n")
        if first > line_bytes or (first < 0 and len(data) > line_bytes):
            n += 1
            stats["long_lines"] += 1
            line, bad = _decode(data[:line_bytes], final=False)
            bad_utf8 |= bad
            if match := search(line):
                yield n, line, match
            if first < 0:
                carry, skipping = b"", True
                continue
            data = data[first + 1:]
        end = data.rfind(b"\n") + 1
        carry = data[end:]
        if end:
            text, bad = _decode(data[:end - 1])
            bad_utf8 |= bad
            for line in text.split("\n"):
                n += 1
                line = line.removesuffix("\r")
                if match := search(line):
                    yield n, line, match
    if carry:
        line, bad = _decode(carry.removesuffix(b"\r"))
        bad_utf8 |= bad
        if match := search(line):
            yield n + 1, line, match
    stats["not_utf8_files"] += bad_utf8


def main(stdin: io.TextIOBase | None = None, stdout: io.TextIOBase | None = None) -> None:
    """Run one search: read the request from stdin, write JSON lines to stdout.

    Args:
        stdin: a text stream holding the request ``{"pattern": str, "ignore_case": bool,
            "files": [[path, shown_path], ...], "line_bytes": int, "hit_chars": int,
            "max_chars": int}`` (default ``sys.stdin``); ``max_chars`` bounds the characters
            of the ``shown_path:line:text`` hits written, later hits are only counted.
        stdout: where the records go (default ``sys.stdout``), flushed at each file.
    """
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    request = json.load(stdin)
    search = re.compile(request["pattern"], re.IGNORECASE if request["ignore_case"] else 0).search
    stats = {"hits": 0, "hidden_hits": 0, "hidden_chars": 0, "binary_files": 0,
             "unreadable_files": 0, "long_lines": 0, "not_utf8_files": 0}
    room = request["max_chars"]
    for i, (path, shown) in enumerate(request["files"]):
        stdout.write(json.dumps(["f", i]) + "\n")
        stdout.flush()
        try:
            with open(path, "rb") as f:
                if b"\0" in f.read(BINARY_SNIFF_BYTES):
                    stats["binary_files"] += 1
                    continue
                f.seek(0)
                for n, line, match in search_file(f, search, request["line_bytes"], stats):
                    text = _hit_text(line, match, request["hit_chars"])
                    size = len(f"{shown}:{n}:{text}\n")
                    stats["hits"] += 1
                    if size <= room:
                        room -= size
                        stdout.write(json.dumps(["h", i, n, text]) + "\n")
                        stdout.flush()  # a search killed later still shows this hit
                    else:
                        room = 0  # hits stay in file order: none after the first left out
                        stats["hidden_hits"] += 1
                        stats["hidden_chars"] += size
        except OSError:
            stats["unreadable_files"] += 1
    stdout.write(json.dumps(["s", stats]) + "\n")
    stdout.flush()


if __name__ == "__main__":
    main()
