"""Which older exchanges matter to the current request: the identifiers both name.

What this module does: finds the identifiers a text names (paths, ``file.ext`` names, called
names) and tells whether an exchange shares one with the request being worked on, the
lifecycle's relevance rule ("what stays Hot is decided by relevance to the current topic").
What it does not do: pick tiers (``core/lifecycle.py`` does). Pure; inputs never mutated.
Taught in ``notebooks/08_context_lifecycle.ipynb``.

Source: 003_85ccd58041fa7231.txt (relevance to the current topic keeps an exchange Hot).
"""

from __future__ import annotations

import re
from typing import Collection, Sequence

from mini_agent.core.messages import Message, content_blocks
from mini_agent.core.text_scan import findall_in_words
from mini_agent.core.tokens import tool_input_json

_IDENT_RE = re.compile(r"(?:[\w.-]+/)+[\w.-]+|[\w-]+\.[A-Za-z]{1,5}\b|\b[A-Za-z_]\w*(?=\()")


def identifiers(text: str) -> set[str]:
    """Find the identifiers a text names, the keys of relevance promotion.

    Args:
        text: any text; None or "" gives an empty set.

    Returns:
        Paths, ``file.ext`` names and called names (``parse`` from ``parse()``) in ``text``.
    """
    # ``set(_IDENT_RE.findall(text))``, searching only the words that can hold a match: a
    # path has a "/", a file name a ".", a called name is followed by "(" (core/text_scan.py)
    return set(findall_in_words(_IDENT_RE, text or "", ("/", ".", "(")))


def request_texts(message: Message) -> list[str]:
    """Return the texts a user message asks with (its text blocks); [] for other messages.

    Args:
        message: one message; never mutated.

    Returns:
        The ``text`` of each text block of a ``role: "user"`` message, in order (a string
        content is one block); [] for an assistant message or one holding only tool results.
    """
    if message.get("role") != "user":
        return []
    return [b["text"] for b in content_blocks(message) if b.get("type") == "text"]


def current_request_text(history: Sequence[Message]) -> str:
    """Return the request being worked on: the newest user text that is not a tool result.

    Args:
        history: the messages, oldest first.

    Returns:
        The text blocks of the newest user message that has any, joined by newlines; "" if none.
    """
    for m in reversed(history):
        texts = request_texts(m)
        if texts:
            return "\n".join(texts)
    return ""


def exchange_texts(messages: Sequence[Message]) -> list[str]:
    """Return the texts an exchange's identifiers are read from.

    Args:
        messages: the exchange (or any messages); never mutated.

    Returns:
        Each text block's text ("" for a missing one) and each ``tool_use`` input as JSON
        (``ensure_ascii=False``), in order; tool results are not read.
    """
    texts = []
    for m in messages:
        content = m.get("content")
        # the blocks of ``content_blocks(m)``; a string content is one text block
        for b in ({"type": "text", "text": content},) if isinstance(content, str) else \
                content or ():
            kind = b.get("type")
            if kind == "text":
                texts.append(b["text"] or "")
            elif kind == "tool_use":
                texts.append(tool_input_json(b))
    return texts


def exchange_identifiers(messages: Sequence[Message]) -> set[str]:
    """Return every identifier an exchange names (its texts and tool inputs, not its results).

    Args:
        messages: the exchange; never mutated.

    Returns:
        The union of :func:`identifiers` over :func:`exchange_texts`.
    """
    return set().union(*map(identifiers, exchange_texts(messages)))


def shares_identifier(messages: Sequence[Message], wanted: Collection[str]) -> bool:
    """Tell whether an exchange names one of the ``wanted`` identifiers.

    Equal to ``bool(set(wanted) & exchange_identifiers(messages))``, faster: an identifier
    found in a text is a piece of that text, so a text that contains none of the wanted
    strings is not searched with the pattern.

    Args:
        messages: the exchange; never mutated.
        wanted: identifiers of the current request (:func:`identifiers` of its text).

    Returns:
        True when some identifier of the exchange is in ``wanted``.
    """
    wanted_set = wanted if isinstance(wanted, (set, frozenset)) else set(wanted)
    for t in exchange_texts(messages):
        for w in wanted:  # any(w in t for w in wanted), without a generator
            if w in t:
                if not wanted_set.isdisjoint(identifiers(t)):
                    return True
                break
    return False
