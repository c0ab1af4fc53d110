"""The model constants the kit shares: the default model id and the default output cap.

``DEFAULT_MODEL`` is the only model id written in the kit; ``harness/config.py`` lets the
environment (``MINI_AGENT_MODEL``) override it. A test fails when the installed ``anthropic``
SDK marks it deprecated, or it is missing from the SDK's model list or the kit's price table.
Pure: constants only.

Source: Anthropic models overview; seed 000 (autoContinue uses 2048 output tokens per attempt).
"""

from __future__ import annotations

DEFAULT_MODEL = "claude-sonnet-4-6"
"""The model the kit uses unless ``MINI_AGENT_MODEL`` is set (Anthropic models overview)."""

DEFAULT_MAX_TOKENS = 2048
"""Output cap per request in tokens (seed 000: autoContinue uses 2048 per attempt)."""
