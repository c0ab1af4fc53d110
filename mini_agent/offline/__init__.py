"""The offline Claude: the real ``anthropic`` SDK over a local ``httpx2`` transport.

See :mod:`mini_agent.offline.transport`. Brains: :mod:`.brains` (scripted, echo) and
:mod:`.demo_brain` (solves the bundled demo task with real tools).
"""

from .brains import EchoBrain, ScriptedBrain
from .transport import (FaultPlan, OfflineTransport, offline_async_client, offline_client,
                        sse_events)

__all__ = ["EchoBrain", "FaultPlan", "OfflineTransport", "ScriptedBrain",
           "offline_async_client", "offline_client", "sse_events"]
