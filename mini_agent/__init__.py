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
    # the agent and its loop (episodes 01-02)
    "Agent": "mini_agent.harness.agent",
    "RunResult": "mini_agent.harness.loop_events",
    "run_loop": "mini_agent.harness.loop",
    "sdk_model": "mini_agent.harness.model",
    "ContextOverflowError": "mini_agent.harness.model",
    "StreamFaultError": "mini_agent.harness.model",
    "StreamRetry": "mini_agent.harness.loop_events",
    "StreamAssembler": "mini_agent.core.streaming",
    "parse_tool_input": "mini_agent.core.streaming",
    "assemble_tool_uses": "mini_agent.core.streaming",
    "OrderedDrain": "mini_agent.harness.ordered_drain",
    "StreamingExecutor": "mini_agent.harness.executor",
    "run_tool": "mini_agent.harness.executor",
    "Tool": "mini_agent.harness.tools",
    "ToolError": "mini_agent.harness.workspace",
    "Workspace": "mini_agent.harness.workspace",
    "build_tools": "mini_agent.harness.tools",
    # messages and tokens
    "MessageValidationError": "mini_agent.core.messages",
    "validate_messages": "mini_agent.core.messages",
    "approx_tokens": "mini_agent.core.tokens",
    "image_tokens": "mini_agent.core.tokens",
    "approx_request_tokens": "mini_agent.core.tokens",
    "ViewContext": "mini_agent.core.view",
    # the offline Claude
    "offline_client": "mini_agent.offline.transport",
    "offline_async_client": "mini_agent.offline.transport",
    "compaction_client": "mini_agent.offline.transport",
    "FaultPlan": "mini_agent.offline.transport",
    "EchoBrain": "mini_agent.offline.brains",
    "ScriptedBrain": "mini_agent.offline.brains",
    # settings and clocks
    "DEFAULT_MODEL": "mini_agent.core.models",
    "DEFAULT_MAX_TOKENS": "mini_agent.core.models",
    "MODELS": "mini_agent.core.models",
    "ModelSpec": "mini_agent.core.models",
    "model_spec": "mini_agent.core.models",
    "model_name": "mini_agent.harness.config",
    "is_online": "mini_agent.harness.config",
    "ManualClock": "mini_agent.core.clock",
    "SystemClock": "mini_agent.harness.clock",
    # episode 03: masking and continuation
    "mask_old_observations": "mini_agent.core.masking",
    "should_mask": "mini_agent.core.masking",
    "ThresholdMasking": "mini_agent.core.masking",
    "ChunkedMasking": "mini_agent.core.masking",
    "masking_stats": "mini_agent.core.masking",
    "auto_continue": "mini_agent.core.continuation",
    # episode 04: compaction
    "micro_compact": "mini_agent.core.compaction",
    "context_collapse": "mini_agent.core.compaction",
    "auto_compact": "mini_agent.core.compaction",
    "reactive_compact": "mini_agent.core.compact_policy",
    "CompactPolicy": "mini_agent.core.compact_policy",
    "CompactThresholds": "mini_agent.core.compact_policy",
    "model_summarizer": "mini_agent.harness.summarizer",
    "ServerCompaction": "mini_agent.core.server_compaction",
    # episode 05: prompt caching
    "CacheBreakDetector": "mini_agent.core.cache_breaks",
    "CacheBreak": "mini_agent.core.cache_breaks",
    "DYNAMIC_BOUNDARY": "mini_agent.core.cache",
    "split_system_prompt": "mini_agent.core.cache",
    "tools_fingerprint": "mini_agent.core.cache_breaks",
    "system_fingerprint": "mini_agent.core.cache_breaks",
    "place_breakpoints": "mini_agent.core.cache",
    "model_price": "mini_agent.core.pricing",
    "cost_usd": "mini_agent.core.pricing",
    "cache_hit_rate": "mini_agent.core.pricing",
    "PromptCacheSimulator": "mini_agent.core.prompt_cache",
    "PaybackMasking": "mini_agent.core.cache_policies",
    "BreakEvenMasking": "mini_agent.core.breakeven_masking",
    "ResumeBreakpoints": "mini_agent.core.cache_policies",
    # episode 06: hooks
    "HookManager": "mini_agent.harness.hooks",
    "HookResult": "mini_agent.core.hook_output",
    "block_rm_rf": "mini_agent.core.hook_guards",
    # episode 07: sessions
    "SessionWriter": "mini_agent.harness.session",
    "resume_session": "mini_agent.harness.session_reader",
    # episode 08: the context lifecycle
    "LifecyclePolicy": "mini_agent.core.lifecycle",
    "LifecycleThresholds": "mini_agent.core.lifecycle",
    "lifecycle_view": "mini_agent.core.lifecycle",
    "fold_exchange": "mini_agent.core.timeline",
    "timeline_line": "mini_agent.core.timeline",
    "tier_for_age": "mini_agent.core.lifecycle",
    "eviction_order": "mini_agent.core.lifecycle",
    "ColdStore": "mini_agent.harness.cold_store",
    "recall_segment_tool": "mini_agent.harness.cold_store",
    # transcripts (episodes 03, 11)
    "load_transcript": ("mini_agent.harness.transcript_files", "load"),
    "parse_transcript": ("mini_agent.core.transcripts", "parse_text"),
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
    "resume_checks": "mini_agent.harness.resume_checks",
    "RecordClient": "mini_agent.harness.record_client",
    "RecordServer": "mini_agent.harness.record_client",
    "write_handoff": "mini_agent.harness.handoff",
    "run_lab": "mini_agent.harness.checkpoint_lab",
    "ProgressView": "mini_agent.ui.progress_view",
    # charts whose saved state is small (plotly.js comes from the kernel, once per page)
    "PlotlyChart": "mini_agent.ui.plotly_chart",
    # real sessions: ../shared/data or $MINI_AGENT_SHARED_DATA, else a generated one
    "real_or_generated": "mini_agent.harness.real_sessions",
    # episode 11: evaluating policies
    "evaluate_session": "mini_agent.core.replay",
    "Fact": "mini_agent.core.retention",
    "view_text": "mini_agent.core.retention",
    "retained_facts": "mini_agent.core.retention",
    "retention_curve": "mini_agent.core.retention",
    "extract_facts": "mini_agent.core.retention",
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
