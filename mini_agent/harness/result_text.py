"""Make a tool's result safe to store and send: valid UTF-8, under a size cap.

:func:`cap_result_content` cuts a result to :data:`MAX_TOOL_RESULT_CHARS` (text blocks share
the budget, an image that does not fit becomes a note); :func:`encodable_text` and
:func:`encodable_content` turn a non-UTF-8 file name (surrogate escapes) into U+FFFD, so the
session file and the request can be encoded. Used by the executor on every result
(:mod:`mini_agent.harness.executor`, which re-exports these names). Pure functions.
Taught in ``notebooks/02_parallel_tools.ipynb``.
Source: 002_4516104fd432e704.txt section 2 (tool results as data); the Messages API's
``tool_result`` content (a string or text/image blocks).
"""

from __future__ import annotations

import json
from typing import Any

from mini_agent.core.messages import Block

MAX_TOOL_RESULT_CHARS = 100_000
"""Cap on one tool_result's content as the executor stores and sends it (characters; an
image counts its base64 data). The kit's own tools cut their output far lower
(``DEFAULT_MAX_OUTPUT_CHARS``); this bounds what other tools and PostToolUse hooks may put
into the history and the session file."""


def cap_result_content(content: str | list[Block], limit_chars: int = MAX_TOOL_RESULT_CHARS
                       ) -> str | list[Block]:
    """Return tool_result ``content`` cut to ``limit_chars`` characters (input not mutated).

    A string keeps its first ``limit_chars`` characters and gets a ``[... truncated: N more
    characters]`` line; in a list, text blocks share the budget in order and an image whose
    data does not fit is replaced by a text note. Content under the cap is returned as is.

    Args:
        content: a tool_result's content, a string or a list of text and image blocks.
        limit_chars: the cap in characters (an image counts its base64 data); default
            :data:`MAX_TOOL_RESULT_CHARS`.

    Returns:
        The content as is when it fits, else a new, cut string or list.

    >>> cap_result_content("abcdef", 3)
    'abc\\n[... truncated: 3 more characters]'
    """
    if isinstance(content, str):
        if len(content) <= limit_chars:
            return content
        return (content[:limit_chars]
                + f"\n[... truncated: {len(content) - limit_chars:,} more characters]")
    sizes = [len(b.get("text", "")) if b.get("type") == "text"
             else len(str((b.get("source") or {}).get("data", ""))) for b in content]
    if sum(sizes) <= limit_chars:
        return content
    out: list[Block] = []
    left = limit_chars
    for block, size in zip(content, sizes):
        if block.get("type") == "text":
            if left > 0:
                out.append({**block, "text": cap_result_content(block["text"], left)})
            left -= size
        elif size <= left:
            out.append(block)
            left -= size
        else:
            out.append({"type": "text", "text": f"[an image of {size:,} characters was "
                        "dropped: over the tool result size cap]"})
    return out


def encodable_text(text: str) -> str:
    """Make ``text`` valid UTF-8: a non-UTF-8 file name (surrogate escapes) shows as U+FFFD.

    Args:
        text: any str, possibly holding lone surrogates.

    Returns:
        ``text`` itself when it encodes, else a copy with U+FFFD in place of the bad parts.

    >>> encodable_text("caf\\udce9.txt") == "caf\\ufffd.txt"
    True
    >>> encodable_text("look \\ud83d") == "look \\ufffd"
    True
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        if not _only_escapes(text):   # e.g. half of an emoji's pair: one U+FFFD each
            return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _only_escapes(text: str) -> bool:
    return all("\udc80" <= c <= "\udcff" for c in text if "\ud800" <= c <= "\udfff")


def encodable_content(content: Any) -> Any:
    """Return tool_result ``content`` whose text is valid UTF-8.

    Args:
        content: a string, a list of blocks, or anything else (returned as is).

    Returns:
        :func:`encodable_text` of a string; for a list, a new list with each text block's
        text made encodable (input not mutated).
    """
    if isinstance(content, str):
        return encodable_text(content)
    if isinstance(content, list):
        return [{**b, "text": encodable_text(b["text"])}
                if b.get("type") == "text" and isinstance(b.get("text"), str) else b
                for b in content]
    return content


def encodable_blocks(blocks: list[Block]) -> list[Block]:
    """Return content blocks whose every string is valid UTF-8 (lone surrogates -> U+FFFD).

    A model's tool input may hold a JSON escape such as ``"\\udcff"``, which decodes to a
    lone surrogate; the SDK cannot encode a request holding one, nor a session line. The
    check is one ``json.dumps`` of the blocks; only blocks that fail are copied.

    Args:
        blocks: a message's content blocks; never mutated.

    Returns:
        ``blocks`` itself when every string encodes, else a copy with each string (keys,
        text, nested tool input values) passed through :func:`encodable_text`.
    """
    try:
        json.dumps(blocks, ensure_ascii=False).encode("utf-8")
        return blocks
    except UnicodeEncodeError:
        return [_encodable_value(block) for block in blocks]


def _encodable_value(value: Any) -> Any:
    if isinstance(value, str):
        return encodable_text(value)
    if isinstance(value, list):
        return [_encodable_value(v) for v in value]
    if isinstance(value, dict):
        return {_encodable_value(k): _encodable_value(v) for k, v in value.items()}
    return value
