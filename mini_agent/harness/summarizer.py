"""The model-backed summariser for compaction: asks Claude, through the SDK, for a summary.

The pure stages (``micro_compact``, ``context_collapse``, ``auto_compact``) live in
``core/compaction.py`` and take any ``summarize(messages) -> str``; this module gives them the
one that calls the model (online or offline: the same ``anthropic`` client). IO: the SDK client.
Taught in ``notebooks/04_compaction.ipynb``.
"""

from __future__ import annotations

from typing import Any

from mini_agent.core.compaction import SUMMARY_PROMPT, Summarize, render_transcript
from mini_agent.core.messages import Message
from mini_agent.harness.config import model_name

__all__ = ["model_summarizer"]


def model_summarizer(client: Any, *, model: str | None = None, max_tokens: int = 4096,
                     prompt: str = SUMMARY_PROMPT) -> Summarize:
    """Return ``summarize(messages) -> str`` that asks the model for a structured summary.

    Sends ``messages`` + one user turn holding ``prompt`` through ``client.messages.create``
    (an ``anthropic.Anthropic``, online or offline; no tools are offered, so tool blocks in
    the history are rendered as text first). Raises whatever the SDK raises; an empty answer
    is returned as "" (auto_compact turns it into a SummaryError).
    Source: Anthropic "Effective context engineering" (compaction prompt); seed 004.
    """
    def summarize(messages: list[Message]) -> str:
        transcript = render_transcript(messages)
        response = client.messages.create(
            model=model or model_name(), max_tokens=max_tokens,
            messages=[{"role": "user", "content": f"<conversation>\n{transcript}\n"
                       f"</conversation>\n\n{prompt}"}])
        return "".join(getattr(b, "text", "") for b in response.content).strip()
    return summarize
