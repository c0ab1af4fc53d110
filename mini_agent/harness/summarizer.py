"""The model-backed summariser for compaction: asks Claude, through the SDK, for a summary.

The pure stages (``micro_compact``, ``context_collapse``, ``auto_compact``) live in
``core/compaction.py`` and take any ``summarize(messages) -> str``; this module gives them the
one that calls the model (online or offline: the same ``anthropic`` client). IO: the SDK client.
Taught in ``notebooks/04_compaction.ipynb``.

Source:
    section 3 of 002_4516104fd432e704.txt (autoCompact: the LLM summary stage); Anthropic
    "Effective context engineering" (compaction prompt); 004_b74ef821c58ee4ec.txt.
"""

from __future__ import annotations

from typing import Any

from mini_agent.core.compaction import SUMMARY_PROMPT, Summarize, render_transcript
from mini_agent.core.messages import Message
from mini_agent.harness.config import model_name

__all__ = ["model_summarizer"]


def model_summarizer(client: Any, *, model: str | None = None, max_tokens: int = 4096,
                     prompt: str = SUMMARY_PROMPT) -> Summarize:
    """Make a ``summarize(messages) -> str`` that asks the model for a structured summary.

    Each call renders ``messages`` as text (:func:`~mini_agent.core.compaction.render_transcript`;
    no tools are offered, so tool blocks become text) and sends ONE user message,
    ``<conversation>...</conversation>`` followed by ``prompt``, through
    ``client.messages.create``. It raises whatever the SDK raises; an empty answer is
    returned as ``""`` (auto_compact turns it into a SummaryError).

    Args:
        client: an ``anthropic.Anthropic`` client, online or offline.
        model: the model id (None: :func:`~mini_agent.harness.config.model_name` at call
            time).
        max_tokens: the summary's output limit in tokens (default 4,096).
        prompt: the instruction after the conversation (default ``SUMMARY_PROMPT``).

    Returns:
        The summarise function: the text blocks of the answer joined and stripped.

    Source:
        Anthropic "Effective context engineering" (compaction prompt); seed 004.
    """
    def summarize(messages: list[Message]) -> str:
        transcript = render_transcript(messages)
        response = client.messages.create(
            model=model or model_name(), max_tokens=max_tokens,
            messages=[{"role": "user", "content": f"<conversation>\n{transcript}\n"
                       f"</conversation>\n\n{prompt}"}])
        return "".join(getattr(b, "text", "") for b in response.content).strip()
    return summarize
