"""Text files read and written faithfully: bytes, BOM, line endings and mode kept."""

import os
import stat
import threading

import pytest

import neta
from neta import atomic_write, read_text


def test_read_text_keeps_crlf_line_endings(tmp_path):
    path = tmp_path / "dos.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    text_file = read_text(path)
    assert text_file.text == "one\r\ntwo\r\n"
    assert text_file.newline == "\r\n"
    assert text_file.bom is False
    assert text_file.encoding == "utf-8"


def test_read_text_strips_and_records_a_utf8_bom(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfhello\n")
    text_file = read_text(path)
    assert text_file.text == "hello\n"
    assert text_file.bom is True
    assert text_file.encode("bye\n") == b"\xef\xbb\xbfbye\n"


def test_newline_of_a_mixed_file_is_none(tmp_path):
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"a\r\nb\n")
    assert read_text(path).newline is None


def test_read_text_binary_file_is_refused_as_binary_with_offset(tmp_path):
    path = tmp_path / "image.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(neta.ToolError, match=r"binary file \(NUL byte at offset 8\)"):
        read_text(path)


def test_read_text_latin1_file_is_refused_as_not_utf8_with_offset(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("café au lait\n".encode("latin-1"))
    with pytest.raises(neta.ToolError, match=r"not UTF-8 text \(invalid byte 0xe9 at offset 3\)"):
        read_text(path)


def test_read_text_offset_counts_the_bom(tmp_path):
    path = tmp_path / "bom-latin1.txt"
    path.write_bytes(b"\xef\xbb\xbfab\xff")
    with pytest.raises(neta.ToolError, match="at offset 5"):
        read_text(path)


def test_read_text_utf16_file_is_refused_naming_its_encoding(tmp_path):
    path = tmp_path / "utf16.txt"
    path.write_bytes("hello\n".encode("utf-16"))
    with pytest.raises(neta.ToolError, match="UTF-16 encoded, not UTF-8"):
        read_text(path)


def test_read_text_missing_file_is_a_tool_error(tmp_path):
    with pytest.raises(neta.ToolError, match="no such file"):
        read_text(tmp_path / "missing.txt")


def test_read_text_directory_is_a_tool_error(tmp_path):
    with pytest.raises(neta.ToolError, match="directory"):
        read_text(tmp_path)


def test_read_text_over_max_bytes_is_refused(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("x" * 101)
    with pytest.raises(neta.ToolError, match="too large"):
        read_text(path, max_bytes=100)
    assert read_text(path, max_bytes=101).text == "x" * 101


def test_atomic_write_writes_bytes_exactly(tmp_path):
    path = tmp_path / "out.bin"
    assert atomic_write(path, b"a\r\nb\n\x00") == 6
    assert path.read_bytes() == b"a\r\nb\n\x00"


def test_atomic_write_text_is_not_newline_translated(tmp_path):
    path = tmp_path / "out.txt"
    atomic_write(path, "a\r\nb\nc\r")
    assert path.read_bytes() == b"a\r\nb\nc\r"


def test_atomic_write_keeps_the_mode_of_the_replaced_file(tmp_path):
    path = tmp_path / "script.sh"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o750)
    atomic_write(path, "#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert path.read_text() == "#!/bin/sh\necho hi\n"


def test_atomic_write_new_file_gets_the_usual_mode_not_the_temp_files(tmp_path):
    reference = tmp_path / "reference.txt"
    reference.write_text("made by open()\n")
    path = tmp_path / "new.txt"
    atomic_write(path, "made by atomic_write\n")
    assert stat.S_IMODE(path.stat().st_mode) == stat.S_IMODE(reference.stat().st_mode)


def test_atomic_write_keeps_a_bom_the_replaced_file_had(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfold\n")
    atomic_write(path, "new\n")
    assert path.read_bytes() == b"\xef\xbb\xbfnew\n"


def test_atomic_write_does_not_add_a_bom_to_a_file_without_one(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_bytes(b"old\n")
    atomic_write(path, "new\n")
    assert path.read_bytes() == b"new\n"


def test_atomic_write_creates_parents_only_when_asked(tmp_path):
    path = tmp_path / "a" / "b" / "c.txt"
    with pytest.raises(neta.ToolError, match="cannot write"):
        atomic_write(path, "x")
    assert not (tmp_path / "a").exists()
    atomic_write(path, "x", make_parents=True)
    assert path.read_text() == "x"


def test_atomic_write_through_a_symlink_keeps_the_link(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    atomic_write(link, "new\n")
    assert link.is_symlink()
    assert target.read_text() == "new\n"


def test_atomic_write_leaves_no_temporary_files(tmp_path):
    for content in ("one", "two", "three"):
        atomic_write(tmp_path / "file.txt", content)
    assert os.listdir(tmp_path) == ["file.txt"]


def test_atomic_write_replaces_the_inode_so_readers_see_old_or_new(tmp_path):
    path = tmp_path / "file.txt"
    path.write_text("old\n")
    with path.open() as reader:
        atomic_write(path, "new\n")
        assert reader.read() == "old\n"
    assert path.read_text() == "new\n"


def test_atomic_write_to_a_directory_is_refused(tmp_path):
    with pytest.raises(neta.ToolError, match="is a directory"):
        atomic_write(tmp_path, "x")


def _within(seconds, function):
    """Run ``function`` in a daemon thread and return (finished in time, what it raised)."""
    outcome = {}

    def work():
        try:
            function()
        except BaseException as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(seconds)
    return not worker.is_alive(), outcome.get("error")


def test_read_text_of_a_character_device_is_refused_at_once():
    finished, error = _within(1.0, lambda: read_text("/dev/zero"))
    assert finished
    assert isinstance(error, neta.ToolError)
    assert "not a regular file" in str(error)


def test_read_text_of_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    try:
        finished, error = _within(1.0, lambda: read_text(fifo))
        assert finished
        assert isinstance(error, neta.ToolError)
        assert "not a regular file" in str(error)
    finally:
        os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))


def test_read_text_limit_holds_on_the_read_even_when_stat_says_zero_bytes():
    # /proc files are regular files whose size reads as 0 but whose contents are not empty
    assert os.stat("/proc/self/status").st_size == 0
    with pytest.raises(neta.ToolError, match="too large"):
        read_text("/proc/self/status", max_bytes=16)


def test_read_text_without_max_bytes_is_still_bounded(tmp_path, monkeypatch):
    from neta.fuzzy_match import textfile

    monkeypatch.setattr(textfile, "MAX_TEXT_BYTES", 64)
    path = tmp_path / "grown.txt"
    path.write_text("x" * 65)
    with pytest.raises(neta.ToolError, match="too large"):
        read_text(path)


def test_atomic_write_to_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    finished, error = _within(1.0, lambda: atomic_write(fifo, "x"))
    assert finished
    assert isinstance(error, neta.ToolError)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_atomic_write_to_a_read_only_file_is_refused_and_leaves_it(tmp_path):
    path = tmp_path / "locked.txt"
    path.write_text("keep\n")
    path.chmod(0o444)
    with pytest.raises(neta.ToolError, match="read-only"):
        atomic_write(path, "changed\n")
    assert path.read_text() == "keep\n"


def test_atomic_write_lone_surrogate_is_a_tool_error_naming_its_position(tmp_path):
    with pytest.raises(neta.ToolError, match=r"surrogate U\+D800 at character 3"):
        atomic_write(tmp_path / "s.txt", "abc\ud800")
    assert not (tmp_path / "s.txt").exists()


def test_read_text_error_shows_control_characters_in_the_path_escaped(tmp_path):
    with pytest.raises(neta.ToolError) as caught:
        read_text(tmp_path / "no\nsuch")
    assert "\n" not in str(caught.value)
    assert "no\\nsuch" in str(caught.value)
