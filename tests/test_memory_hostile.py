"""MemoryTool under hostile disk state and malformed fields: a ToolError, nothing lost."""

import json

import pytest
from anthropic.lib.tools import ToolError

from mini_agent.core.clock import ManualClock
from mini_agent.harness.memory import META_FILE, MemoryTool


@pytest.fixture
def tool(tmp_path):
    return MemoryTool(tmp_path / "m", clock=ManualClock(), max_file_bytes=1000,
                      max_total_bytes=100_000)


def test_a_non_utf8_file_is_refused_by_name_and_left_as_it_was(tool):
    raw = b"\xff\xfe abc\n"
    (tool.memory_root / "bin.md").write_bytes(raw)
    for command in ({"command": "view", "path": "/memories/bin.md"},
                    {"command": "str_replace", "path": "/memories/bin.md", "old_str": "abc",
                     "new_str": "x"},
                    {"command": "insert", "path": "/memories/bin.md", "insert_line": 0,
                     "insert_text": "x"}):
        with pytest.raises(ToolError, match=r"/memories/bin.md is not UTF-8 text \(byte 0\)"):
            tool.call(command)
    assert (tool.memory_root / "bin.md").read_bytes() == raw


def test_a_file_on_the_path_or_a_rename_into_itself_is_a_tool_error_without_host_paths(tool):
    tool.call({"command": "create", "path": "/memories/a.md", "file_text": "keep\n"})
    (tool.memory_root / "d").mkdir()
    cases = [({"command": "create", "path": "/memories/a.md/x", "file_text": "y"},
              "Not a directory"),
             ({"command": "rename", "old_path": "/memories/a.md",
               "new_path": "/memories/a.md/b"}, "Not a directory"),
             ({"command": "rename", "old_path": "/memories/d", "new_path": "/memories/d/e"},
              "Invalid argument")]
    for command, reason in cases:
        with pytest.raises(ToolError, match=reason) as info:
            tool.call(command)
        assert str(tool.base_dir) not in str(info.value)
        assert "/memories/" in str(info.value)
    assert (tool.memory_root / "a.md").read_text() == "keep\n"
    assert (tool.memory_root / "d").is_dir()


@pytest.mark.parametrize("command, reason", [
    ({"command": "view", "path": "/memories/a.md", "view_range": ["a", "b"]}, "view_range"),
    ({"command": "view", "path": "/memories/a.md", "view_range": 5}, "view_range"),
    ({"command": "view", "path": "/memories/a.md", "view_range": [1, 2, 3]}, "view_range"),
    ({"command": "create", "path": "/memories/b.md", "file_text": ["x"]},
     "file_text must be a string, got list"),
    ({"command": "str_replace", "path": "/memories/a.md", "old_str": 1, "new_str": "x"},
     "old_str must be a string, got int"),
    ({"command": "create", "path": "/memories/s.md", "file_text": "ok \ud800"},
     r"file_text holds U\+D800 at index 3"),
    ({"command": "str_replace", "path": "/memories/a.md", "old_str": "", "new_str": "x"},
     "old_str is empty"),
])
def test_malformed_fields_are_refused_before_anything_is_written(tool, command, reason):
    tool.call({"command": "create", "path": "/memories/a.md", "file_text": "keep\n"})
    with pytest.raises(ToolError, match=reason):
        tool.call(command)
    assert sorted(p.name for p in tool.memory_root.iterdir()) == ["a.md"]
    assert (tool.memory_root / "a.md").read_text() == "keep\n"


def test_a_hand_placed_file_over_the_cap_is_not_viewed_whole(tool):
    (tool.memory_root / "big.md").write_bytes(b"x" * 5000)
    with pytest.raises(ToolError,
                       match=r"/memories/big.md is 5,000 bytes, over the 1,000-byte cap"):
        tool.call({"command": "view", "path": "/memories/big.md"})
    assert (tool.memory_root / "big.md").stat().st_size == 5000


@pytest.mark.parametrize("text", ["{not json", "[]", '{"/memories/a.md": 3}',
                                  '{"/memories/a.md": {"last_used_at": "x"}}'])
def test_a_corrupt_provenance_file_is_named_and_never_overwritten(tool, text):
    tool.call({"command": "create", "path": "/memories/a.md", "file_text": "keep\n"})
    meta = tool.base_dir / META_FILE
    meta.write_text(text)
    with pytest.raises(ToolError, match=f"{META_FILE} is not a provenance file"):
        tool.call({"command": "view", "path": "/memories"})
    assert meta.read_text() == text
    assert (tool.memory_root / "a.md").read_text() == "keep\n"
    assert tool.refusals and META_FILE in tool.refusals[-1]


def test_the_kit_tool_gets_the_same_refusals_as_data(tool):
    from mini_agent.harness.executor import run_tool
    (tool.memory_root / "bin.md").write_bytes(b"\xff")
    content, is_error = run_tool({"memory": tool.kit_tool()}, "memory",
                                 {"command": "view", "path": "/memories/bin.md"})
    assert is_error and "is not UTF-8 text" in content


def test_a_non_utf8_file_name_is_listed_as_text_the_api_can_carry(tool):
    import os
    with open(os.path.join(bytes(tool.memory_root), b"caf\xe9.md"), "wb") as f:
        f.write(b"x")
    listing = tool.call({"command": "view", "path": "/memories"})
    assert listing.endswith("/memories/caf\ufffd.md")
    listing.encode("utf-8")   # the SDK's tool runner sends it back as a tool_result


def _linked_root(tmp_path):
    """A base folder whose ``memories`` is a symlink to a folder outside it, holding a file."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("precious\n", encoding="utf-8")
    base = tmp_path / "base"
    base.mkdir()
    (base / "memories").symlink_to(outside, target_is_directory=True)
    return base, outside


def test_a_memory_root_that_is_a_symlink_is_refused_at_construction(tmp_path):
    base, outside = _linked_root(tmp_path)
    with pytest.raises(ValueError, match=r"memories is a symbolic link .*replace the link"):
        MemoryTool(base, clock=ManualClock())
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert (base / "memories").is_symlink()  # left as it was


def test_a_dangling_symlink_root_creates_nothing_where_it_points(tmp_path):
    base = tmp_path / "base"
    base.mkdir()
    (base / "memories").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(ValueError, match="symbolic link"):
        MemoryTool(base, clock=ManualClock())
    assert not (tmp_path / "elsewhere").exists()


def test_a_root_swapped_for_a_symlink_later_is_refused_and_nothing_outside_changes(tmp_path):
    base, outside = _linked_root(tmp_path)
    (base / "memories").unlink()
    clock = ManualClock()
    tool = MemoryTool(base, clock=clock)  # a real folder now
    (base / "memories").rmdir()
    (base / "memories").symlink_to(outside, target_is_directory=True)
    for command in ({"command": "view", "path": "/memories"},
                    {"command": "create", "path": "/memories/new.md", "file_text": "x"},
                    {"command": "delete", "path": "/memories/keep.txt"}):
        with pytest.raises(ToolError, match="symbolic link"):
            tool.call(command)
    with pytest.raises(ToolError, match="symbolic link"):
        tool.expire(clock.now() + 400 * 24 * 3600.0)  # would remove keep.txt as unused
    with pytest.raises(ToolError, match="symbolic link"):
        tool.clear_all_memory()
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert (outside / "keep.txt").read_text(encoding="utf-8") == "precious\n"


def test_a_memory_root_that_is_a_file_is_refused_by_name(tmp_path):
    base = tmp_path / "base"
    base.mkdir()
    (base / "memories").write_text("not a folder\n", encoding="utf-8")
    with pytest.raises(ValueError, match="memories is not a folder"):
        MemoryTool(base, clock=ManualClock())
    assert (base / "memories").read_text(encoding="utf-8") == "not a folder\n"


def test_a_name_in_two_unicode_forms_is_one_memory_file(tool):
    composed, decomposed = "/memories/caf\u00e9.md", "/memories/cafe\u0301.md"
    tool.call({"command": "create", "path": decomposed, "file_text": "one\n"})
    assert "one" in tool.call({"command": "view", "path": composed})
    tool.call({"command": "str_replace", "path": "/memories/cafe%CC%81.md", "old_str": "one",
               "new_str": "two"})
    assert [p.name for p in tool.memory_root.iterdir()] == ["caf\u00e9.md"]
    assert (tool.memory_root / "caf\u00e9.md").read_text() == "two\n"
    assert list(tool.metadata()) == [composed]
    tool.call({"command": "rename", "old_path": composed, "new_path": "/memories/d\u00e9j\u00e0.md"})
    tool.call({"command": "delete", "path": "/memories/de\u0301ja\u0300.md"})
    assert list(tool.memory_root.iterdir()) == [] and tool.metadata() == {}
