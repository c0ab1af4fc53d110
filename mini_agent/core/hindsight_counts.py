"""Each block's tokens for the hindsight bound, counted without the cache simulator's hashing.

:func:`~mini_agent.core.hindsight.masking_bound` needs the tokens of every block the request
of the whole history sends, and of every tool result once masked. The reference counts them
through :func:`~mini_agent.core.prompt_cache.prefix_boundaries` (:func:`_block_tokens`),
which serialises and hashes every block; :func:`_direct_block_tokens` and
:func:`_masked_result_tokens` count the same figures directly (``tests/test_hindsight.py``
compares them). It does not price anything or choose a schedule.

Pure: no IO, inputs never mutated.
Source: Anthropic prompt caching docs as modelled in :mod:`mini_agent.core.prompt_cache`.
"""

from __future__ import annotations

import math

from mini_agent.core.mask_placeholder import masked_block
from mini_agent.core.messages import Message
from mini_agent.core.prompt_cache import prefix_boundaries
from mini_agent.core.tokens import CHARS_PER_TOKEN, approx_tokens, session_memo


def _block_tokens(request: dict) -> tuple[list[int], list[tuple]]:
    """Each block's tokens and path, as :func:`prefix_boundaries` counts them (the reference)."""
    bounds = prefix_boundaries(request)
    tokens, prev = [], 0
    for b in bounds:
        tokens.append(b.prefix_tokens - prev)
        prev = b.prefix_tokens
    return tokens, [b.path for b in bounds]


def _direct_block_tokens(history: list[Message], system: str | list | None,
                         tools: list[dict] | None) -> tuple[list[int], list[tuple]] | None:
    """:func:`_block_tokens` of ``{"system": system, "messages": history}`` without hashing.

    ``prefix_boundaries`` serialises and hashes every block; the bound needs only each block's
    tokens (``approx_tokens`` per block, a string content or system one text block) and its
    path, so they are counted here directly. Returns None for an input this does not model
    (tools, a block that is not a dict or that looks like a message, content of another type):
    the caller then asks :func:`_block_tokens`. ``tests/test_hindsight.py`` compares the two.
    """
    if tools:
        return None
    tokens: list[int] = []
    paths: list[tuple] = []
    if isinstance(system, str):
        if system:
            tokens.append(math.ceil(len(system) / CHARS_PER_TOKEN))
            paths.append(("system", 0))
    elif isinstance(system, list):
        for i, block in enumerate(system):
            if not isinstance(block, dict) or "role" in block:
                return None
            tokens.append(approx_tokens(block))
            paths.append(("system", i))
    elif system:
        return None
    for i, message in enumerate(history):
        if not isinstance(message, dict):
            return None
        content = message.get("content")
        if isinstance(content, str):
            tokens.append(math.ceil(len(content) / CHARS_PER_TOKEN))
            paths.append(("messages", i, 0))
        elif isinstance(content, list):
            for j, block in enumerate(content):
                if not isinstance(block, dict) or "role" in block:
                    return None
                tokens.append(approx_tokens(block))
                paths.append(("messages", i, j))
        elif content is not None:
            return None
    return tokens, paths


def _masked_result_tokens(history: list[Message], positions: list[tuple[int, int]]
                          ) -> dict[tuple, int]:
    """Each tool result's ``approx_tokens`` once masked, keyed by its block path.

    What ``approx_tokens(mask_old_observations(history, keep=0)[i]["content"][j])`` gives
    for each result ``(i, j)``, without building the masked history:
    ``mask_old_observations`` with ``keep=0`` and no excluded tools replaces every result by
    :func:`~mini_agent.core.mask_placeholder.masked_block` (None: left verbatim).
    ``tests/test_hindsight.py`` compares the two.
    """
    memo = session_memo()
    out = {}
    for i, j in positions:
        block = history[i]["content"][j]
        replacement = masked_block(block, memo)
        out[("messages", i, j)] = approx_tokens(block if replacement is None else replacement)
    return out
