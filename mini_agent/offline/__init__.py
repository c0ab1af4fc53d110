"""The offline Claude: the real ``anthropic`` SDK over a local ``httpx2`` transport.

See :mod:`mini_agent.offline.transport`. Brains: :mod:`.brains` (scripted, echo) and
:mod:`.demo_brain` (solves the bundled demo task with real tools). Plug-ins of the transport:
``core.prompt_cache`` (prompt-cache simulator, a ``usage_model``), ``core.context_edits``
(server-side ``clear_tool_uses_20250919``) and ``core.server_compaction`` (server-side
``compact_20260112`` and the deterministic summariser), each a ``request_transform``.
"""

from mini_agent.offline.brains import EchoBrain, ScriptedBrain
from mini_agent.core.prompt_cache import PromptCacheSimulator
from mini_agent.core.context_edits import clear_tool_uses_transform
from mini_agent.offline.transport import (FaultPlan, OfflineTransport, compaction_client,
                                          offline_async_client, offline_client, sse_events)

__all__ = ["EchoBrain", "FaultPlan", "OfflineTransport", "PromptCacheSimulator",
           "ScriptedBrain", "clear_tool_uses_transform", "compaction_client", "offline_async_client",
           "offline_client", "sse_events"]
