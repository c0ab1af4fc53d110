"""``mini_agent.harness.transcript_files.load``: the errors a reader of a folder of files sees."""

from __future__ import annotations

import pytest

from mini_agent.core.transcripts import TranscriptError
from mini_agent.harness.transcript_files import load, read_text


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


def _text_mode(path) -> str | tuple:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except UnicodeDecodeError as err:
        return (err.start, err.end, err.reason, err.object)


def _binary(path) -> str | tuple:
    try:
        return read_text(path)
    except UnicodeDecodeError as err:
        return (err.start, err.end, err.reason, err.object)


@pytest.mark.parametrize("data", [
    b"", b"\r", b"\n", b"\r\n", b"\r\r\n\n\r", b"a\rb\r\nc\nd\r", b"\xef\xbb\xbf{}\r\n",
    "\u00e9\r\n\u3000\u2028\x85\r".encode(), b"x" * 8191 + b"\r\n" + b"y" * 9000 + b"\r",
    b"ok\r\n\xd5\x00", b"ok\xe2\x82", b"\xed\xa0\x80", "😀\r".encode()[:3],
    b"x" * 20_000 + b"\xff\r\n"])
def test_read_text_reads_what_text_mode_reads(tmp_path, data):
    path = tmp_path / "f.jsonl"
    path.write_bytes(data)
    assert _binary(path) == _text_mode(path)
