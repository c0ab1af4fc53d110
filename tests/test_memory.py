"""MemoryTool: the SDK's memory tool contract, the hostile corpus on disk, caps, expiry."""

import hashlib
import os
from pathlib import Path

import pytest
from anthropic.lib.tools import ToolError
from anthropic.tools import BetaAbstractMemoryTool, BetaLocalFilesystemMemoryTool

from mini_agent.core.clock import ManualClock
from mini_agent.core.hostile_paths import HOSTILE_PATHS
from mini_agent.harness.memory import MemoryTool
from mini_agent.harness.memory_audit import audit_hostile_paths, plant_symlinks


def snapshot(root: Path, skip: Path) -> dict[str, str]:
    """Every entry under root except ``skip``: path -> content hash / link target / 'dir'."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p == skip or skip in p.parents:
            continue
        if p.is_symlink():
            out[str(p)] = "link:" + os.readlink(p)
        elif p.is_dir():
            out[str(p)] = "dir"
        else:
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest() + str(p.stat().st_mtime_ns)
    return out


def test_is_the_sdks_memory_tool(tmp_path):
    tool = MemoryTool(tmp_path / "m")
    assert isinstance(tool, BetaAbstractMemoryTool) and isinstance(tool,
                                                                   BetaLocalFilesystemMemoryTool)
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}
    assert tool.call({"command": "create", "path": "/memories/a.md", "file_text": "one\n"}) \
        == "File created successfully at: /memories/a.md"
    tool.call({"command": "str_replace", "path": "/memories/a.md", "old_str": "one",
               "new_str": "two"})
    tool.call({"command": "insert", "path": "/memories/a.md", "insert_line": 0,
               "insert_text": "zero"})
    tool.call({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/d/b.md"})
    assert (tmp_path / "m" / "memories" / "d" / "b.md").read_text() == "zero\ntwo\n"
    assert "1\tzero" in tool.call({"command": "view", "path": "/memories/d/b.md"})
    assert tool.call({"command": "delete", "path": "/memories/d"}) == "Successfully deleted /memories/d"
    assert list((tmp_path / "m" / "memories").iterdir()) == []


def test_every_hostile_path_refused_by_every_command_and_nothing_outside_touched(tmp_path):
    base = tmp_path / "base"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (tmp_path / "secret.txt").write_text("secret beside base\n")
    tool = MemoryTool(base, clock=ManualClock())
    plant_symlinks(tool.memory_root, outside)
    tool.call({"command": "create", "path": "/memories/notes.md", "file_text": "keep\n"})
    before = snapshot(tmp_path, skip=base)
    inside_before = snapshot(base, skip=base / "nothing")
    assert len(HOSTILE_PATHS) >= 40
    for label, path in HOSTILE_PATHS:
        commands = [
            {"command": "view", "path": path},
            {"command": "create", "path": path, "file_text": "pwned\n"},
            {"command": "str_replace", "path": path, "old_str": "secret", "new_str": "pwned"},
            {"command": "insert", "path": path, "insert_line": 0, "insert_text": "pwned"},
            {"command": "delete", "path": path},
            {"command": "rename", "old_path": path, "new_path": "/memories/stolen.md"},
            {"command": "rename", "old_path": "/memories/notes.md", "new_path": path},
        ]
        for command in commands:
            with pytest.raises(ToolError, match="refused memory path") as info:
                tool.call(command)
            assert "/memories/" in str(info.value), (label, command["command"])
    assert snapshot(tmp_path, skip=base) == before
    assert snapshot(base, skip=base / "nothing") == inside_before
    assert len(tool.refusals) == 7 * len(HOSTILE_PATHS)


def test_kit_versus_sdk_validate_path(tmp_path):
    rows = audit_hostile_paths(tmp_path)
    assert all(r["kit"] == "refused" and not r["created"] for r in rows)
    sdk_refuses = {r["label"] for r in rows if r["sdk"] == "refused"}
    assert sdk_refuses == {
        "dot-dot", "dot-dot twice", "dot-dot after a name", "dot then dot-dot",
        "absolute path elsewhere", "the filesystem root", "relative path", "relative dot-dot",
        "empty path", "double leading slash", "upper case root", "leading space",
        "prefix trick with dots", "fully encoded root", "symlinked directory pointing out",
        "symlinked file pointing out", "dangling symlink pointing out"}
    sdk = {r["label"]: r["sdk"] for r in rows}
    assert sdk["prefix trick"] == "accepted -> memories/X/notes.md"
    assert sdk["double-encoded dot-dot"] == "accepted -> memories/%252e%252e/secret.txt"
    assert sdk["NUL byte"] == "crashed (ValueError)"


def test_size_caps_refuse_before_writing(tmp_path):
    tool = MemoryTool(tmp_path, max_file_bytes=100, max_total_bytes=150)
    tool.call({"command": "create", "path": "/memories/a.md", "file_text": "a" * 90})
    with pytest.raises(ToolError, match="cap per memory file is 100"):
        tool.call({"command": "insert", "path": "/memories/a.md", "insert_line": 0,
                   "insert_text": "b" * 20})
    with pytest.raises(ToolError, match="cap per memory file is 100"):
        tool.call({"command": "create", "path": "/memories/big.md", "file_text": "é" * 51})
    with pytest.raises(ToolError, match="the cap is 150"):
        tool.call({"command": "create", "path": "/memories/b.md", "file_text": "b" * 61})
    tool.call({"command": "str_replace", "path": "/memories/a.md", "old_str": "a" * 90,
               "new_str": "short"})
    tool.call({"command": "create", "path": "/memories/b.md", "file_text": "b" * 61})
    assert not (tmp_path / "memories" / "big.md").exists()
    assert tool.total_bytes() == 66
    with pytest.raises(ValueError):
        MemoryTool(tmp_path / "x", max_file_bytes=10, max_total_bytes=5)


def test_secrets_are_redacted_before_writing(tmp_path):
    tool = MemoryTool(tmp_path)
    key = "sk-ant-api03-" + "k" * 30
    result = tool.call({"command": "create", "path": "/memories/env.md",
                        "file_text": f"ANTHROPIC_API_KEY={key}\nAuthorization: Bearer {'t' * 20}\n"})
    assert "2 secret(s) were redacted" in result
    tool.call({"command": "str_replace", "path": "/memories/env.md", "old_str": "ANTHROPIC",
               "new_str": f"AKIAABCDEFGHIJKLMNOP ANTHROPIC"})
    text = (tmp_path / "memories" / "env.md").read_text()
    assert key not in text and "t" * 20 not in text and "AKIA" not in text
    assert tool.redactions == {"anthropic_api_key": 1, "bearer_token": 1, "aws_access_key_id": 1}


def test_provenance_and_expiry_with_an_injected_clock(tmp_path):
    clock = ManualClock()
    t0 = clock.now()
    tool = MemoryTool(tmp_path, clock=clock, expiry_seconds=3600, source="model")
    tool.call({"command": "create", "path": "/memories/old.md", "file_text": "old\n"})
    tool.call({"command": "create", "path": "/memories/used.md", "file_text": "used\n"})
    clock.advance(3000)
    tool.call({"command": "view", "path": "/memories/used.md"})
    meta = tool.metadata()
    assert meta["/memories/old.md"] == {"source": "model", "created_at": t0, "updated_at": t0,
                                        "last_used_at": t0}
    assert meta["/memories/used.md"]["last_used_at"] == t0 + 3000
    clock.advance(601)  # old.md unused for 3,601 s; used.md for 601 s
    assert tool.expire() == ["/memories/old.md"]
    assert not (tmp_path / "memories" / "old.md").exists()
    assert (tmp_path / "memories" / "used.md").exists()
    clock.advance(3600)  # expiry also runs before each command
    with pytest.raises(ToolError, match="does not exist"):
        tool.call({"command": "view", "path": "/memories/used.md"})
    assert tool.expired == ["/memories/old.md", "/memories/used.md"]
    assert set(tool.metadata()) == set()


def test_kit_tool_returns_errors_as_data(tmp_path):
    from mini_agent.harness.executor import run_tool
    kit = MemoryTool(tmp_path).kit_tool()
    assert kit.definition() == {"type": "memory_20250818", "name": "memory"}
    content, is_error = run_tool({"memory": kit}, "memory",
                                 {"command": "view", "path": "/memories/../etc"})
    assert is_error and "climbs above /memories" in content
    content, is_error = run_tool({"memory": kit}, "memory", {"command": "view",
                                                              "path": "/memories"})
    assert not is_error and content.endswith("/memories")


def test_malformed_commands_are_refused_with_advice(tmp_path):
    tool = MemoryTool(tmp_path)
    cases = {"explode": ({"command": "explode", "path": "/memories"}, "unknown memory command"),
             "no text": ({"command": "create", "path": "/memories/a.md"}, "missing: file_text"),
             "not a str": ({"command": "view", "path": 5}, "it is of type int, not a string"),
             "no path": ({"command": "rename", "old_path": "/memories/a"}, "missing: new_path")}
    for label, (command, message) in cases.items():
        with pytest.raises(ToolError, match=message):
            tool.call(command)
    assert list((tmp_path / "memories").iterdir()) == []
