"""The inputs exercise 03's checks feed the code under test, and what they expect back.

Histories of tool_use/tool_result exchanges (one result per message, or several sharing one
user message as in :func:`busy_history`), a real 100x60 PNG built in memory, the seed's
placeholder text, and message and block builders. Used by
:mod:`mini_agent.grading.checks.checks_03_masking`; no checks here.

Source: exercise 03 (``solutions/03_masking.py``) and its seed, 000_86e3ff2076a5ae37.txt
(the placeholder ``[observation masked — N lines omitted]``, ``approxTokens`` characters/4).
"""

from __future__ import annotations

import base64
import struct
import zlib


def png(width: int, height: int) -> str:
    """Build a real, all-white PNG, base64 (built here, no file).

    Args:
        width: the image's width (pixels).
        height: the image's height (pixels).

    Returns:
        The PNG file's bytes in base64 (ASCII), as an image block's ``source.data`` holds them.
    """
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    rows = b"".join(b"\x00" + b"\xff" * width for _ in range(height))
    raw = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0,
                                                            0, 0))
           + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
    return base64.b64encode(raw).decode("ascii")


IMAGE_100x60 = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": png(100, 60)}}
"""6,000 pixels: ``ceil(6000 / 750) == 8`` tokens."""

PAD = " (output padded so that it is longer than its placeholder)"


def placeholder(n: int) -> str:
    """Return the seed's placeholder for a masked result.

    Args:
        n: the line count of the original output.

    Returns:
        ``"[observation masked — N lines omitted]"``.
    """
    return f"[observation masked — {n} lines omitted]"


def lines(tag: str, n: int) -> str:
    """Build a tool output of ``n`` lines (no trailing newline), distinct per tag.

    Args:
        tag: what makes this output's lines differ from another's ("A", "B"...).
        n: the number of lines.

    Returns:
        The output text.
    """
    return "\n".join(f"{tag} line {k}: output the model has already read" for k in range(1, n + 1))


def exchange(k: int, output, *, name="read_file", is_error=None, text_after=None):
    """Build an assistant tool_use and the user message with its result.

    Args:
        k: the step number; ids are ``toolu_<k:02d>``.
        output: the tool_result's ``content`` (a str or a list of parts).
        name: the tool's name (default "read_file").
        is_error: the result's ``is_error``; None leaves the key out.
        text_after: a text block after the result in the same user message, or None.

    Returns:
        ``[assistant message, user message]``.
    """
    use = {"role": "assistant", "content": [
        {"type": "text", "text": f"Step {k}."},
        {"type": "tool_use", "id": f"toolu_{k:02d}", "name": name, "input": {"path": f"f{k}.py"}}]}
    result = {"type": "tool_result", "tool_use_id": f"toolu_{k:02d}", "content": output}
    if is_error is not None:
        result["is_error"] = is_error
    content = [result] + ([{"type": "text", "text": text_after}] if text_after else [])
    return [use, {"role": "user", "content": content}]


def history(outputs, **kwargs) -> list[dict]:
    """Build a valid history: the task, then one tool_use/tool_result exchange per output.

    Args:
        outputs: the tool outputs, oldest first.
        kwargs: passed to each :func:`exchange` (``name``, ``is_error``, ``text_after``).

    Returns:
        The messages, starting with the user's task.
    """
    messages = [{"role": "user", "content": "Find and fix the failing test."}]
    for k, output in enumerate(outputs, 1):
        messages += exchange(k, output, **kwargs)
    return messages


OUT_A = lines("a", 3)
OUT_B = lines("b", 5)
OUT_C = "設計メモ: 丸め誤差\n" + lines("c", 6)
OUT_D = [{"type": "text", "text": "d line 1\nd line 2" + PAD}, IMAGE_100x60,
         {"type": "text", "text": "\nd line 3"}]
OUT_E = lines("e", 4)


def busy_history() -> list[dict]:
    """Build a history of five results A..E where B, C, D share ONE assistant message.

    A user message with string content and an assistant message without tools sit in between.

    Returns:
        The messages; the results are at the positions of ``BUSY_RESULTS``.
    """
    return [
        {"role": "user", "content": "Fix the failing test."},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Reading the test first."},
            {"type": "tool_use", "id": "t_a", "name": "read_file", "input": {"path": "test.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t_a",
                                      "content": OUT_A}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Three lookups at once."},
            {"type": "tool_use", "id": "t_b", "name": "grep", "input": {"pattern": "round("}},
            {"type": "tool_use", "id": "t_c", "name": "read_file", "input": {"path": "設計.md"}},
            {"type": "tool_use", "id": "t_d", "name": "screenshot", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t_b", "content": OUT_B},
            {"type": "tool_result", "tool_use_id": "t_c", "content": OUT_C, "is_error": False},
            {"type": "tool_result", "tool_use_id": "t_d", "content": OUT_D}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Found it: round() in a.py."}]},
        {"role": "user", "content": "Go on, and keep the public API."},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t_e", "name": "run_bash", "input": {"command": "pytest"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t_e", "content": OUT_E},
            {"type": "text", "text": "The tests take 2 minutes."}]},
    ]


BUSY_RESULTS = [(2, 0), (4, 0), (4, 1), (4, 2), (8, 0)]
"""Where results A..E are: (message, block)."""
BUSY_PLACEHOLDERS = [placeholder(3), placeholder(5), placeholder(7), placeholder(3),
                     placeholder(4)]


def result_contents(view) -> list:
    """Read the content of each of the five results of :func:`busy_history`.

    Args:
        view: a (masked) copy of :func:`busy_history`.

    Returns:
        The ``content`` of results A..E, in order.
    """
    return [view[i]["content"][j].get("content") for i, j in BUSY_RESULTS]


def user(*blocks):
    """Build a user message of content blocks.

    Args:
        blocks: the content blocks, in order.

    Returns:
        ``{"role": "user", "content": [...]}``.
    """
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks):
    """Build an assistant message of content blocks.

    Args:
        blocks: the content blocks, in order.

    Returns:
        ``{"role": "assistant", "content": [...]}``.
    """
    return {"role": "assistant", "content": list(blocks)}


def tool_use(name, tool_input, tool_id="t1"):
    """Build a tool_use block.

    Args:
        name: the tool's name.
        tool_input: its input dict.
        tool_id: its ``id`` (default "t1").

    Returns:
        ``{"type": "tool_use", "id", "name", "input"}``.
    """
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def text(value):
    """Build a text block.

    Args:
        value: the text.

    Returns:
        ``{"type": "text", "text": value}``.
    """
    return {"type": "text", "text": value}
