"""The offline Claude: the real ``anthropic`` SDK over a local ``httpx2`` transport.

See :mod:`mini_agent.offline.transport`. Brains: :mod:`.brains` (scripted, echo) and
:mod:`.demo_brain` (solves the bundled demo task with real tools). Plug-ins of the transport:
:mod:`.cache_sim` (prompt-cache simulator, a ``usage_model``), :mod:`.context_editing`
(server-side ``clear_tool_uses_20250919``) and :mod:`.compaction_edit` (server-side
``compact_20260112`` and the deterministic summariser), each a ``request_transform``.
"""

from .brains import EchoBrain, ScriptedBrain
from .cache_sim import PromptCacheSimulator
from .context_editing import clear_tool_uses_transform
from .transport import (FaultPlan, OfflineTransport, offline_async_client, offline_client,
                        sse_events)

__all__ = ["EchoBrain", "FaultPlan", "OfflineTransport", "PromptCacheSimulator",
           "ScriptedBrain", "clear_tool_uses_transform", "offline_async_client",
           "offline_client", "sse_events"]
