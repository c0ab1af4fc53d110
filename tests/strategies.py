"""Hypothesis strategies for valid Anthropic histories, shared by the property tests.

``histories()`` draws histories that pass ``validate_messages``: alternating roles starting with
a user message, assistant turns with text and 0-3 ``tool_use`` blocks, each answered in the next
user message by ``tool_result`` blocks (string content, list content with text and images,
some ``is_error``), sometimes followed by user text. Tool names come from a small fixed set
so policies that look at names (exclude_tools, clearable tools) are exercised.
"""

from __future__ import annotations

import base64
import struct
import zlib

from hypothesis import strategies as st

TOOL_NAMES = ("read_file", "grep", "glob", "list_dir", "run_bash", "edit_file")


def tiny_png(width: int, height: int) -> str:
    """Return base64 of a valid PNG header + IHDR of the given size (pixels are not needed)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    data = (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk
            + struct.pack(">I", zlib.crc32(chunk)))
    return base64.b64encode(data).decode()


# Non-empty text that is not whitespace-only (the API refuses empty text blocks).
texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                max_size=120).filter(lambda s: s.strip() != "")
observations = st.lists(texts, min_size=1, max_size=8).map("\n".join)


@st.composite
def tool_result_contents(draw):
    """A tool_result ``content``: a string, or a list of text (and sometimes image) blocks."""
    if draw(st.booleans()):
        return draw(observations)
    parts = [{"type": "text", "text": draw(observations)}]
    if draw(st.booleans()):
        w, h = draw(st.integers(1, 2000)), draw(st.integers(1, 2000))
        parts.append({"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                  "data": tiny_png(w, h)}})
    return parts


@st.composite
def histories(draw, *, min_turns: int = 1, max_turns: int = 8):
    """A valid history (list of MessageParam dicts) of ``min_turns..max_turns`` exchanges."""
    messages = [{"role": "user", "content": draw(texts)}]
    counter = 0
    for _ in range(draw(st.integers(min_turns, max_turns))):
        n_tools = draw(st.integers(0, 3))
        content = []
        if draw(st.booleans()) or n_tools == 0:
            content.append({"type": "text", "text": draw(texts)})
        ids = []
        for _ in range(n_tools):
            counter += 1
            tid = f"toolu_{counter:04d}"
            ids.append(tid)
            content.append({"type": "tool_use", "id": tid,
                            "name": draw(st.sampled_from(TOOL_NAMES)),
                            "input": {"path": draw(texts)}})
        messages.append({"role": "assistant", "content": content})
        if ids:
            results = []
            for tid in ids:
                block = {"type": "tool_result", "tool_use_id": tid,
                         "content": draw(tool_result_contents())}
                if draw(st.integers(0, 5)) == 0:
                    block["is_error"] = True
                results.append(block)
            if draw(st.booleans()):
                results.append({"type": "text", "text": draw(texts)})
            messages.append({"role": "user", "content": results})
        else:
            messages.append({"role": "user", "content": draw(texts)})
    return messages
