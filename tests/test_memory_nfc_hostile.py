"""MemoryTool's NFC form under hostile names: a ToolError naming the limit, nothing written.

A name of characters that NFC expands (U+0958 becomes two code points, 3 bytes become 6) can
pass the name-length check as sent and exceed it once put in NFC, and a character can pass the
look-alike check as sent and bring one out in NFC (U+2ADC); the tool refuses both as it refuses
them as sent, instead of letting the file system's error escape or writing the look-alike.
"""

import unicodedata

import pytest
from anthropic.lib.tools import ToolError

from mini_agent.core.clock import ManualClock
from mini_agent.core.memory_paths import MAX_NAME_BYTES
from mini_agent.harness.memory import MemoryTool


@pytest.fixture
def tool(tmp_path):
    return MemoryTool(tmp_path / "m", clock=ManualClock(), max_file_bytes=1000,
                      max_total_bytes=100_000)


@pytest.mark.parametrize("char", ["\u0958", "\ufb2c", "\U0001d15e"])
def test_a_name_nfc_makes_too_long_is_refused_by_name(tool, char):
    name = char * (250 // len(char.encode()))
    assert len(name.encode()) <= MAX_NAME_BYTES \
        < len(unicodedata.normalize("NFC", name).encode())
    with pytest.raises(ToolError, match=f"a name is longer than {MAX_NAME_BYTES} bytes"):
        tool.call({"command": "create", "path": f"/memories/{name}", "file_text": "x"})
    assert not list(tool.memory_root.glob("*.md")) and not tool.metadata()


def test_a_lookalike_that_only_nfc_brings_out_is_refused(tool):
    # U+2ADC passes as sent; its NFC form ends in U+0338 COMBINING LONG SOLIDUS OVERLAY
    with pytest.raises(ToolError, match="U\\+0338"):
        tool.call({"command": "create", "path": "/memories/a\u2adc.md", "file_text": "x"})
    assert not tool.metadata()


def test_percent_encoded_nfd_reaches_the_nfc_file_in_every_command(tool):
    nfc = "caf\u00e9.md"
    nfd = "%".join([""] + [f"{b:02X}" for b in unicodedata.normalize("NFD", nfc).encode()])
    tool.call({"command": "create", "path": f"/memories/{nfc}", "file_text": "one\n"})
    assert "one" in tool.call({"command": "view", "path": f"/memories/{nfd}"})
    tool.call({"command": "rename", "old_path": f"/memories/{nfd}",
               "new_path": "/memories/d%C3%A9j%61/x.md"})
    assert [p.name for p in tool.memory_root.iterdir() if not p.name.startswith(".")] \
        == ["d\u00e9ja"]
    assert list(tool.metadata()) == ["/memories/d\u00e9ja/x.md"]


def test_a_file_kept_in_nfd_before_stays_reachable_by_the_name_it_is_listed_under(tool):
    nfd = unicodedata.normalize("NFD", "caf\u00e9.md")
    tool.memory_root.mkdir(parents=True, exist_ok=True)
    (tool.memory_root / nfd).write_text("old\n")     # written before paths were put in NFC
    assert nfd in tool.call({"command": "view", "path": "/memories"})
    assert "old" in tool.call({"command": "view", "path": f"/memories/{nfd}"})
    tool.call({"command": "rename", "old_path": f"/memories/{nfd}", "new_path": "/memories/c.md"})
    assert (tool.memory_root / "c.md").read_text() == "old\n"
    assert not (tool.memory_root / nfd).exists()
