"""``mini_agent.harness.transcript_files.load``: the errors a reader of a folder of files sees."""

from __future__ import annotations

import pytest

from mini_agent.core.transcripts import TranscriptError
from mini_agent.harness.transcript_files import load


@pytest.mark.parametrize("head_bytes", [17, 20_000])  # 20,000: past a read buffer's 8 KiB
def test_a_binary_file_is_named_as_not_utf8_text_with_the_byte_and_its_offset(tmp_path,
                                                                              head_bytes):
    path = tmp_path / "binary.jsonl"
    path.write_bytes(b'{"type": "user"}\n'.ljust(head_bytes, b" ") + b"\xd5\x00\xff")
    with pytest.raises(TranscriptError) as caught:
        load(path)
    assert str(caught.value) == (f"cannot read {path}: not UTF-8 text (byte 0xd5 at offset "
                                 f"{head_bytes}); a transcript is a UTF-8 text file (JSON or "
                                 "JSON lines)")


def test_an_unreadable_file_keeps_the_system_error(tmp_path):
    path = tmp_path / "locked.jsonl"
    path.write_text("{}\n")
    path.chmod(0)
    try:
        with open(path, "rb"):
            pytest.skip("running with rights that read any file")
    except PermissionError:
        pass
    with pytest.raises(TranscriptError, match=r"cannot read .*locked.jsonl: \[Errno 13\]"):
        load(path)
