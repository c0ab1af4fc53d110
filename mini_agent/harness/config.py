"""One place for the settings that rot: the model id, and whether the kit runs online.

``DEFAULT_MODEL`` is the only model constant in the kit; ``MINI_AGENT_MODEL`` overrides it.
A test fails when the installed ``anthropic`` SDK lists the model in its deprecation table
(``anthropic._data.DEPRECATED_MODELS``), so a retired id is caught before a workshop.

Source:
    Anthropic models overview and deprecations pages; the SDK's ``ANTHROPIC_API_KEY``
    convention.
"""

from __future__ import annotations

import os

from mini_agent.core.models import DEFAULT_MAX_TOKENS, DEFAULT_MODEL

__all__ = ["API_KEY_ENV_VAR", "DEFAULT_MAX_TOKENS", "DEFAULT_MODEL", "MODEL_ENV_VAR", "is_online",
           "model_name"]


MODEL_ENV_VAR = "MINI_AGENT_MODEL"
API_KEY_ENV_VAR = "ANTHROPIC_API_KEY"


def model_name() -> str:
    """Pick the model id the kit uses.

    Returns:
        ``$MINI_AGENT_MODEL`` stripped, if set and non-empty, else ``DEFAULT_MODEL``.
    """
    return os.environ.get(MODEL_ENV_VAR, "").strip() or DEFAULT_MODEL


def is_online() -> bool:
    """Tell whether the kit uses the real API.

    Returns:
        True when ``$ANTHROPIC_API_KEY`` is set and not blank, else False (offline Claude).
    """
    return bool(os.environ.get(API_KEY_ENV_VAR, "").strip())
