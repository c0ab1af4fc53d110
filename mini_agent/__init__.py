"""mini_agent: a small Claude-Code-style agent harness for teaching context engineering.

Start with ``notebooks/00_start_here.ipynb`` or ``mini-agent demo``. Each module holds one
concept and names the episode notebook that teaches it.
"""

__version__ = "0.1.0"

# Checkpoints, idempotency, resume checks and handoff (notebooks/10_checkpoints_and_handoff).
# Imported on first use, so a worker process started by the kill lab loads only what it runs.
_CHECKPOINT_NAMES = {
    "idempotency_key": "core.progress", "new_progress": "core.progress",
    "ProgressVersionError": "core.progress", "LeaseHeldError": "core.progress",
    "build_handoff": "core.handoff", "render_handoff_markdown": "core.handoff",
    "ProgressStore": "harness.checkpoint", "LeaseLostError": "harness.checkpoint",
    "write_json_atomic": "harness.checkpoint", "run_step": "harness.checkpoint",
    "reconcile": "harness.checkpoint", "resume_checks": "harness.checkpoint",
    "RecordClient": "harness.record_client", "RecordServer": "harness.record_client",
    "write_handoff": "harness.handoff", "run_lab": "harness.checkpoint_lab",
    "ProgressView": "ui.progress_view",
}


def __getattr__(name: str):
    """Load a public name of the checkpoint modules on first use."""
    if name in _CHECKPOINT_NAMES:
        import importlib
        value = getattr(importlib.import_module(f".{_CHECKPOINT_NAMES[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
