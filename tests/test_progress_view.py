"""The progress-file view: squares by state, kills marked, redraws throttled but forced on kills."""

from __future__ import annotations

import json

from mini_agent.core.progress import new_progress, with_intent, with_result
from mini_agent.ui.progress_view import ProgressView, progress_html


def sample():
    p = new_progress("t", [{"id": "a"}, {"id": "b"}, {"id": "c"}])
    p = with_result(with_intent(p, "a", "t:a:apply", now=1.0), "a", {"seq": 1}, now=2.0)
    return with_intent(p, "b", "t:b:apply", now=3.0)


def test_progress_html_counts_and_marks_kills():
    page = progress_html(sample(), kills=[{"item": "b", "phase": "after_execute"}], title="run")
    assert "done 1" in page and "in_progress 1" in page and "pending 2" not in page
    assert "pending 1" in page and page.count("<span title=") == 3
    assert "b: in_progress (killed after the write)" in page
    assert "kill 1: b after the write" in page
    assert "waiting" in progress_html(None)


def test_view_follows_the_file_and_forces_redraws_on_kills(tmp_path):
    path = tmp_path / "progress.json"
    path.write_text(json.dumps(sample()))
    view = ProgressView(min_interval_seconds=3600)
    view({"kind": "phase", "phase": "killed_run", "progress_path": str(path)})
    view({"kind": "tick", "progress_path": str(path)})           # throttled
    assert view.redraws == 1
    view({"kind": "killed", "item": "b", "phase": "after_intent", "progress_path": str(path)})
    assert view.redraws == 2 and view.kills == [{"item": "b", "phase": "after_intent"}]
    assert "kill 1: b after intent" in view.widget.value
    assert "the run that gets killed" in view.widget.value
