"""mini_agent: a small Claude-Code-style agent harness for teaching context engineering.

Start with ``notebooks/00_start_here.ipynb`` or ``mini-agent demo``. Each module holds one
concept and names the episode notebook that teaches it. Public names are imported lazily
(``from mini_agent import MemoryTool`` loads only the memory modules), so importing a pure
``mini_agent.core`` module never pulls in the SDK or other layers.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_PUBLIC = {
    # episode 09: memory
    "MemoryTool": "mini_agent.harness.memory",
    "MemoryStore": "mini_agent.harness.memory_store",
    "audit_hostile_paths": "mini_agent.harness.memory_audit",
    "validate_memory_path": "mini_agent.core.memory_paths",
    "decode_until_stable": "mini_agent.core.memory_paths",
    "is_lookalike": "mini_agent.core.memory_paths",
    "MemoryPathError": "mini_agent.core.memory_paths",
    "MEMORY_ROOT": "mini_agent.core.memory_paths",
    "HOSTILE_PATHS": "mini_agent.core.hostile_paths",
    "redact_secrets": "mini_agent.core.secrets",
    "MemoryState": "mini_agent.core.memory_lifecycle",
    "Observation": "mini_agent.core.memory_lifecycle",
    "observe": "mini_agent.core.memory_lifecycle",
    "recheck": "mini_agent.core.memory_lifecycle",
    "due_for_recheck": "mini_agent.core.memory_lifecycle",
    "add_summary": "mini_agent.core.memory_lifecycle",
    "delete_memory": ("mini_agent.core.memory_lifecycle", "delete"),
    "ConversationHistory": "mini_agent.core.info_layers",
    "TaskState": "mini_agent.core.info_layers",
    "LongTermMemory": "mini_agent.core.info_layers",
    "SystemOfRecord": "mini_agent.core.info_layers",
    "resolve_layers": ("mini_agent.core.info_layers", "resolve"),
    # episode 09: subagents
    "run_subagent": "mini_agent.harness.subagents",
    "subagent_tool": "mini_agent.harness.subagents",
    "compare_main_window": "mini_agent.harness.subagents",
    "SubagentResult": "mini_agent.harness.subagents",
    "ExplorerBrain": "mini_agent.offline.explorer_brain",
    # episode 10: checkpoints, idempotency, resume checks and handoff
    "idempotency_key": "mini_agent.core.progress",
    "new_progress": "mini_agent.core.progress",
    "ProgressVersionError": "mini_agent.core.progress",
    "LeaseHeldError": "mini_agent.core.progress",
    "build_handoff": "mini_agent.core.handoff",
    "render_handoff_markdown": "mini_agent.core.handoff",
    "ProgressStore": "mini_agent.harness.checkpoint",
    "LeaseLostError": "mini_agent.harness.checkpoint",
    "write_json_atomic": "mini_agent.harness.checkpoint",
    "run_step": "mini_agent.harness.checkpoint",
    "reconcile": "mini_agent.harness.checkpoint",
    "resume_checks": "mini_agent.harness.checkpoint",
    "RecordClient": "mini_agent.harness.record_client",
    "RecordServer": "mini_agent.harness.record_client",
    "write_handoff": "mini_agent.harness.handoff",
    "run_lab": "mini_agent.harness.checkpoint_lab",
    "ProgressView": "mini_agent.ui.progress_view",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562)."""
    target = _PUBLIC.get(name)
    if target is None:
        raise AttributeError(f"module 'mini_agent' has no attribute {name!r}")
    module, attr = target if isinstance(target, tuple) else (target, name)
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
