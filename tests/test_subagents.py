"""Subagents: a fresh window, read-only tools, a bounded summary, artefacts, the saving."""

import json

import pytest

from mini_agent.demo import copy_demo_workspace
from mini_agent.harness.subagents import (DEFAULT_MAX_SUMMARY_TOKENS, artefact_tool,
                                          bound_summary, compare_main_window, run_subagent)
from mini_agent.offline import offline_client
from mini_agent.offline.explorer_brain import ExplorerBrain
from mini_agent.core.tokens import approx_tokens
from mini_agent.harness.tools import ToolError, Workspace

BRIEF = ("Map the invoicing package: for each module its purpose, public functions with line "
         "numbers, and which tests import it.")


class Recording(ExplorerBrain):
    def __init__(self):
        self.requests = []

    def respond(self, request):
        self.requests.append(request)
        return super().respond(request)


@pytest.fixture
def workspace(tmp_path):
    return copy_demo_workspace(tmp_path / "project")


def test_fresh_window_read_only_tools_and_artefacts(workspace):
    brain = Recording()
    result = run_subagent(BRIEF, client=offline_client(brain), workspace=workspace)
    first = brain.requests[0]
    assert first["messages"] == [{"role": "user", "content": [{"type": "text", "text": BRIEF}]}]
    assert {t["name"] for t in first["tools"]} == {"read_file", "list_dir", "grep", "glob",
                                                   "write_artefact"}
    assert result.exit_status == "completed" and result.turns == 4 and not result.truncated
    assert result.artefacts == [".artefacts/project_map.md"]
    text = (workspace / ".artefacts" / "project_map.md").read_text()
    assert "- line 44: def `bulk_discount_rate`" in text
    assert "| invoicing/tax.py | 42 |" in text
    assert result.summary_tokens == approx_tokens(result.summary) <= DEFAULT_MAX_SUMMARY_TOKENS
    assert result.summary.endswith(".artefacts/project_map.md")
    assert "def bulk_discount_rate(" not in result.for_main(), "raw file text leaked"
    assert result.window_tokens > 10 * result.summary_tokens


def test_an_over_long_summary_is_cut_and_kept_in_full(workspace):
    result = run_subagent(BRIEF, client=offline_client(ExplorerBrain()), workspace=workspace,
                          max_summary_tokens=40)
    assert result.truncated and result.summary_tokens <= 40
    assert result.summary.endswith("[summary cut at 40 tokens]")
    full = (workspace / ".artefacts" / "summary_full.md").read_text()
    assert "invoicing/tax.py" in full and approx_tokens(full) > 40
    assert result.artefacts == [".artefacts/project_map.md", ".artefacts/summary_full.md"]


def test_bound_summary():
    assert bound_summary("short", 16) == ("short", False)
    text, cut = bound_summary("x" * 1000, 50)
    assert cut and approx_tokens(text) <= 50 and text.startswith("x" * 100)
    with pytest.raises(ValueError):
        bound_summary("x", 10)


def test_bad_briefs_and_tools(workspace):
    with pytest.raises(ValueError, match="brief is empty"):
        run_subagent("  ", client=offline_client(ExplorerBrain()), workspace=workspace)
    with pytest.raises(ValueError, match="unknown tool"):
        run_subagent(BRIEF, client=offline_client(ExplorerBrain()), workspace=workspace,
                     tools=("read_file", "rm_rf"))


def test_artefact_names_stay_in_their_folder(workspace):
    tool = artefact_tool(Workspace(workspace))
    for name in ("../escape.md", "/etc/x", "a/b.md", ".."):
        with pytest.raises(ToolError, match="plain file name"):
            tool.run({"name": name, "content": "x"})
    assert tool.run({"name": "ok.md", "content": "é"}) == "wrote .artefacts/ok.md (2 bytes)"
    assert not (workspace.parent / "escape.md").exists()


def test_artefacts_never_follow_a_link_out_of_the_workspace_or_block_on_a_fifo(workspace,
                                                                             tmp_path):
    """A symbolic link planted in the artefact folder (or as the folder) used to be
    followed: write_artefact overwrote a file outside the workspace; a FIFO blocked it."""
    import os
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.md").write_text("keep me")
    folder = workspace / ".artefacts"
    folder.mkdir()
    (folder / "findings.md").symlink_to(outside / "victim.md")
    os.mkfifo(folder / "pipe.md")
    tool = artefact_tool(Workspace(workspace))
    with pytest.raises(ToolError, match="symbolic link or a special file"):
        tool.run({"name": "findings.md", "content": "overwritten"})
    with pytest.raises(ToolError, match="not a regular file|special file"):
        tool.run({"name": "pipe.md", "content": "x"})
    assert (outside / "victim.md").read_text() == "keep me"
    (folder / "findings.md").unlink()
    assert tool.run({"name": "findings.md", "content": "new"}) == \
        "wrote .artefacts/findings.md (3 bytes)"
    assert tool.run({"name": "findings.md", "content": "n"}) == \
        "wrote .artefacts/findings.md (1 bytes)"
    assert (folder / "findings.md").read_text() == "n"
    linked = artefact_tool(Workspace(workspace), "out")
    (workspace / "out").symlink_to(outside)
    with pytest.raises(ToolError, match="leads outside the workspace"):
        linked.run({"name": "victim.md", "content": "overwritten"})
    assert (outside / "victim.md").read_text() == "keep me"


def test_delegating_saves_main_window_tokens(workspace):
    figures = compare_main_window(
        BRIEF, workspace=workspace, direct_client=offline_client(ExplorerBrain()),
        main_client=offline_client(ExplorerBrain()), subagent_client=offline_client(ExplorerBrain()))
    saved = figures["saved_tokens"]
    assert saved == figures["direct_window_tokens"] - figures["delegated_window_tokens"]
    assert saved > 0 and figures["delegated_window_tokens"] * 5 < figures["direct_window_tokens"], \
        json.dumps(figures, indent=1)
    assert figures["delegated_input_tokens"] < figures["direct_input_tokens"]
    # the exploration did not vanish: it happened in the subagent's own window
    assert figures["subagent_window_tokens"] >= figures["direct_window_tokens"] * 0.9
    assert figures["artefacts"] == [".artefacts/project_map.md"]
    assert "invoicing/tax.py (42 lines)" in figures["delegated_answer"]
    assert "invoicing/tax.py (42 lines)" in figures["direct_answer"]


def test_a_subagent_lists_only_the_files_it_wrote(workspace):
    class OtherWriterMeanwhile(ExplorerBrain):
        """Another subagent writes into the shared folder while this one runs."""

        def respond(self, request):
            folder = workspace / ".artefacts"
            folder.mkdir(exist_ok=True)
            (folder / f"other_{len(request['messages'])}.md").write_text("not mine")
            return super().respond(request)

    result = run_subagent(BRIEF, client=offline_client(OtherWriterMeanwhile()),
                          workspace=workspace)
    assert result.artefacts == [".artefacts/project_map.md"]
    assert len(list((workspace / ".artefacts").glob("other_*.md"))) == 4
