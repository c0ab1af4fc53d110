"""The read_file tool's body: numbered lines of a text file, read line by line in bounded memory.

A file is never loaded whole: lines before ``offset`` are passed by counting newlines block
by block, the lines shown are decoded one at a time (each cut at :data:`MAX_LINE_CHARS`
characters, with the count of characters left out), and the lines after are only counted,
up to :data:`COUNT_LINES_BYTES` bytes. The lines shown stop at the line limit or at the
output cap, whichever comes first, and a footer that the cap never cuts says which lines
were shown and the offset to pass next.
Lines end at ``\\n`` only (the numbers ``grep -n`` and ``sed -n`` use; a form feed or U+2028
inside a line does not start a new one) and a CRLF's ``\\r`` is dropped. A lone ``\\r`` (the
line end of classic Mac OS files) does not end a line either, so such a file reads as one
long line, numbered as grep numbers it; the footer then says how many shown lines hold one
and how to read the file by lines (:data:`LONE_CR_NOTE`). A file with a NUL
byte in its first 8 KiB is refused as binary (UTF-16 is named as such); bytes that are not
UTF-8 show as U+FFFD and the footer says so.

IO: files. Taught in ``notebooks/01_agent_loop.ipynb``.

Source:
    000_86e3ff2076a5ae37.txt (read_file with offset and limit, episodes 01-03);
    002_4516104fd432e704.txt (the Read tool: numbered lines, long lines cut).
"""

from __future__ import annotations

import codecs
import io
from typing import Any

from mini_agent.harness.grep_worker import BINARY_SNIFF_BYTES
from mini_agent.harness.workspace import ToolError, Workspace, regular_file

DEFAULT_READ_LIMIT_LINES = 2_000
"""Lines read_file returns when the call gives no ``limit``."""

MAX_LINE_CHARS = 2_000
"""A line longer than this many characters is shown cut, followed by ``[... line cut: N more
characters]``."""

COUNT_LINES_BYTES = 256 << 20
"""After the lines shown, read_file counts the file's remaining lines through at most this
many bytes (256 MiB); a larger rest is reported as ``more than N`` lines."""

LONE_CR_NOTE = ("[{count} line(s) shown hold a carriage return (\\r) not followed by \\n: "
                "lines end at \\n only here, as grep -n and sed count them, so a file with old "
                "Mac line ends reads as one long line. To read it by lines, convert a copy "
                "with run_bash, e.g. tr '\\r' '\\n' < {path} > {path}.lf.txt]")
"""The footer note of read_file when shown lines hold a lone ``\\r`` (``{count}``, ``{path}``)."""

_CHUNK_BYTES = 1 << 20
_FOOTER_RESERVE_CHARS = 200


def _skip_lines(f: io.BufferedReader, count: int) -> int:
    """Move past ``count`` lines, counting newlines block by block.

    Returns:
        How many lines were passed: ``count``, or fewer when the file ends first (a last line
        without a newline counts).
    """
    passed, tail = 0, b"\n"
    while passed < count and (block := f.read(_CHUNK_BYTES)):
        found = block.count(b"\n")
        if passed + found >= count:
            at = -1
            for _ in range(count - passed):
                at = block.index(b"\n", at + 1)
            f.seek(at + 1 - len(block), io.SEEK_CUR)
            return count
        passed += found
        tail = block[-1:]
    return passed + (tail != b"\n")


def _read_line(f: io.BufferedReader) -> tuple[str, int, bool] | None:
    """Read one line, keeping at most MAX_LINE_CHARS characters.

    Returns:
        ``(text, characters left out, held bytes that are not UTF-8)``, or None at the end.
    """
    raw = f.readline(4 * MAX_LINE_CHARS + 4)
    if not raw:
        return None
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    bad = False

    def decode(data: bytes, final: bool) -> str:
        nonlocal bad, decoder
        try:
            return decoder.decode(data, final)
        except UnicodeDecodeError:
            bad = True
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            return decoder.decode(data, final)

    ended = raw.endswith(b"\n")
    text = decode(raw.removesuffix(b"\n").removesuffix(b"\r") if ended else raw, ended)
    left_out = max(len(text) - MAX_LINE_CHARS, 0)
    while not ended and (chunk := f.readline(_CHUNK_BYTES)):
        ended = chunk.endswith(b"\n")
        left_out += len(decode(chunk.removesuffix(b"\n").removesuffix(b"\r")
                               if ended else chunk, ended))
    if not ended:
        left_out += len(decode(b"", True))
        if not left_out:
            text = text.removesuffix("\r")  # a last line without its \n, as grep reads it
    return text[:MAX_LINE_CHARS], left_out, bad


def _count_lines(f: io.BufferedReader) -> tuple[int, bool]:
    """Count the lines left in ``f`` through at most COUNT_LINES_BYTES bytes.

    Args:
        f: the file, just after a line end or at its end.

    Returns:
        ``(lines, complete)``: ``complete`` is False when the count stopped at the byte limit.
    """
    lines, read, last = 0, 0, b"\n"
    while chunk := f.read(_CHUNK_BYTES):
        lines += chunk.count(b"\n")
        last = chunk[-1:]
        read += len(chunk)
        if read >= COUNT_LINES_BYTES and f.peek(1):
            return lines, False
    return lines + (last != b"\n"), True


def read_file(ws: Workspace, input: dict[str, Any]) -> str:
    """Read lines of a text file, each numbered, with a footer when only part is shown.

    Args:
        ws: the workspace; ``max_output_chars`` bounds the result.
        input: ``{"path": str, "offset"?: int, "limit"?: int}``: ``offset`` is the 1-based
            first line (default 1), ``limit`` the number of lines (default
            ``DEFAULT_READ_LIMIT_LINES`` = 2,000).

    Returns:
        The lines as ``"{n:>6}\\t{line}"`` (a line over 2,000 characters cut, with ``[... line
        cut: N more characters]``), stopping at ``limit`` lines or before the output cap,
        then ``[lines A-B of N; pass offset=B+1 to read more]`` when the file is not shown
        whole (``of more than N`` past 256 MiB), a note when shown lines hold bytes that
        are not UTF-8 and one when they hold a lone ``\\r`` (:data:`LONE_CR_NOTE`);
        ``(path is empty)`` for an empty file.

    Raises:
        ToolError: ``offset`` or ``limit`` < 1, ``offset`` past the last line, or the path is
            outside, a directory, missing, not a regular file, or binary (a NUL byte in its
            first 8 KiB).
    """
    target = regular_file(ws, input["path"])
    rel = ws.relative(target)
    offset = int(input.get("offset", 1))
    limit = int(input.get("limit", DEFAULT_READ_LIMIT_LINES))
    if offset < 1 or limit < 1:
        raise ToolError("offset and limit must be >= 1 (offset is a 1-based line number)")
    with open(target, "rb") as f:
        head = f.read(BINARY_SNIFF_BYTES)
        if not head:
            return f"({rel} is empty)"
        if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            raise ToolError(f"{rel} is UTF-16 text (it starts with a UTF-16 byte order mark); "
                            "read_file reads UTF-8. Convert a copy with run_bash, e.g. "
                            f"iconv -f UTF-16 -t UTF-8 {rel} > {rel}.utf8.txt")
        if b"\0" in head:
            raise ToolError(f"{rel} looks binary (a NUL byte at byte {head.index(0):,}); "
                            "read_file shows text only. To inspect it, use run_bash, e.g. "
                            f"xxd {rel} | head")
        f.seek(0)
        if (passed := _skip_lines(f, offset - 1)) < offset - 1:
            raise ToolError(f"offset {offset} is past the end of {rel} ({passed} lines)")
        shown, bad_lines, cr_lines = [], 0, 0
        budget = ws.max_output_chars - min(_FOOTER_RESERVE_CHARS, ws.max_output_chars // 2)
        while len(shown) < limit:
            mark = f.tell()
            line = _read_line(f)
            if line is None:
                break
            text, left_out, bad = line
            row = f"{offset + len(shown):>6}\t{text}"
            if len(row) + 1 > budget:
                if shown:
                    f.seek(mark)  # this line is left for the next call
                    break
                left_out += len(row) - budget  # a first line alone over the cap is cut
                row = row[:budget]
            if left_out:
                row += f" [... line cut: {left_out:,} more characters]"
            shown.append(row)
            budget -= len(row) + 1
            bad_lines += bad
            cr_lines += "\r" in text
        if not shown:
            raise ToolError(f"offset {offset} is past the end of {rel} ({offset - 1} lines)")
        last = offset + len(shown) - 1
        rest, complete = _count_lines(f)
    body = "\n".join(shown)
    if offset > 1 or rest:
        total = f"{last + rest:,}" if complete else f"more than {last + rest:,}"
        more = f"; pass offset={last + 1} to read more" if rest else ""
        body += f"\n[lines {offset}-{last} of {total}{more}]"
    if bad_lines:
        body += (f"\n[{bad_lines} line(s) shown hold bytes that are not UTF-8, shown as U+FFFD; "
                 "edit_file cannot change this file]")
    if cr_lines:
        body += "\n" + LONE_CR_NOTE.format(count=cr_lines, path=rel)
    return body
