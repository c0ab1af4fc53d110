"""The offline Claude: the real ``anthropic`` SDK over a local ``httpx2`` transport.

See :mod:`mini_agent.offline.transport`. ``offline_client()`` with no arguments answers like
today's API (version 2026-10-21): its rules and refusals, prompt caching always on
(``core.prompt_cache``), the ``context_management`` edits a request asks for with their beta
flag (``core.context_edits``: ``clear_tool_uses_20250919``; ``core.server_compaction``:
``compact_20260112``), and what a request forces on the reply (``.forced_output``: a tool
call for ``tool_choice`` ``any`` / ``tool``, JSON valid for ``output_config.format``).
Brains: :mod:`.brains` (scripted, echo) and :mod:`.demo_brain` (solves
the bundled demo task with real tools). Plug-ins replace the defaults when a notebook wants to
watch them: a ``usage_model`` (your own ``PromptCacheSimulator`` and clock) and
``request_transforms`` (``clear_tool_uses_transform``, ``ServerCompaction`` via
``compaction_client``).
"""

from mini_agent.offline.brains import EchoBrain, ScriptedBrain
from mini_agent.core.prompt_cache import PromptCacheSimulator
from mini_agent.core.context_edits import clear_tool_uses_transform
from mini_agent.offline.transport import (FaultPlan, OfflineTransport, compaction_client,
                                          offline_async_client, offline_client, sse_events)

__all__ = ["EchoBrain", "FaultPlan", "OfflineTransport", "PromptCacheSimulator",
           "ScriptedBrain", "clear_tool_uses_transform", "compaction_client", "offline_async_client",
           "offline_client", "sse_events"]
