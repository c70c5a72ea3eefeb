"""patch_file: fuzzy edits written atomically, refusals leave the file untouched."""

import os
import stat

import pytest

import neta
import neta.fuzzy_match
from neta import patch_file

OLD_NS = 1_000_000_000_000_000_000


def snapshot(path):
    return path.read_bytes(), os.stat(path).st_mtime_ns


def aged(path, data):
    """Write ``data`` and date the file in the past, so any rewrite would show in its mtime."""
    path.write_bytes(data)
    os.utime(path, ns=(OLD_NS, OLD_NS))
    return path


def test_patch_file_exact_match_is_applied_with_diff_and_lines(tmp_path):
    path = aged(tmp_path / "app.py", b"a = 1\nb = 2\nc = 3\n")
    outcome = patch_file(path, "b = 2\n", "b = 20\n")
    assert path.read_bytes() == b"a = 1\nb = 20\nc = 3\n"
    assert outcome.strategy == "exact"
    assert outcome.count == 1
    assert (outcome.start_line, outcome.end_line) == (2, 2)
    assert outcome.changed is True
    assert outcome.path == path
    assert "-b = 2" in outcome.diff
    assert "+b = 20" in outcome.diff
    assert outcome.summary() == "strategy: exact, lines 2\u20132"


def test_patch_file_whitespace_difference_is_matched_by_a_fuzzy_strategy(tmp_path):
    path = tmp_path / "app.py"
    path.write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    outcome = patch_file(path, "def g():\n  return 2\n", "def g():\n  return 3\n")
    assert outcome.strategy != "exact"
    assert path.read_text() == "def f():\n    return 1\n\n\ndef g():\n    return 3\n"
    assert (outcome.start_line, outcome.end_line) == (5, 6)


def test_patch_file_diff_has_two_lines_of_context(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("".join(f"line {n}\n" for n in range(1, 11)))
    outcome = patch_file(path, "line 5\n", "LINE 5\n")
    body = [line for line in outcome.diff.splitlines() if line[:1] in {" ", "-", "+"}]
    body = [line for line in body if not line.startswith(("---", "+++"))]
    assert body == [" line 3", " line 4", "-line 5", "+LINE 5", " line 6", " line 7"]


def test_patch_file_label_names_the_file_in_the_diff(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("old\n")
    outcome = patch_file(path, "old", "new", label="src/x.txt")
    assert outcome.diff.splitlines()[:2] == ["--- a/src/x.txt", "+++ b/src/x.txt"]


def test_patch_file_crlf_and_bom_bytes_are_preserved(tmp_path):
    path = tmp_path / "dos.txt"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    patch_file(path, "two", "TWO")
    assert path.read_bytes() == b"\xef\xbb\xbfone\r\nTWO\r\nthree\r\n"


def test_patch_file_multiline_edit_in_a_crlf_file_keeps_crlf(tmp_path):
    path = tmp_path / "dos.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    patch_file(path, "one\ntwo\n", "uno\ndos\n")
    assert path.read_bytes() == b"uno\r\ndos\r\nthree\r\n"


def test_patch_file_missing_final_newline_stays_missing(tmp_path):
    path = tmp_path / "no-eol.txt"
    path.write_bytes(b"alpha\nbeta")
    outcome = patch_file(path, "beta", "gamma")
    assert path.read_bytes() == b"alpha\ngamma"
    assert "\\ No newline at end of file" in outcome.diff


def test_patch_file_keeps_the_file_mode(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text("echo old\n")
    path.chmod(0o755)
    patch_file(path, "echo old", "echo new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o755


def test_patch_file_no_match_leaves_bytes_and_mtime_unchanged(tmp_path):
    path = aged(tmp_path / "app.py", b"a = 1\r\nb = 2\r\n")
    before = snapshot(path)
    with pytest.raises(neta.fuzzy_match.NoMatchError):
        patch_file(path, "completely different text", "x")
    assert snapshot(path) == before


def test_patch_file_ambiguous_match_leaves_bytes_and_mtime_unchanged(tmp_path):
    path = aged(tmp_path / "app.py", b"x = 1\ny = 2\nx = 1\n")
    before = snapshot(path)
    with pytest.raises(neta.fuzzy_match.AmbiguousMatchError):
        patch_file(path, "x = 1", "x = 3")
    assert snapshot(path) == before


def test_patch_file_replace_all_replaces_every_occurrence(tmp_path):
    path = tmp_path / "app.py"
    path.write_text("x = 1\ny = 2\nx = 1\n")
    outcome = patch_file(path, "x = 1", "x = 3", replace_all=True)
    assert outcome.count == 2
    assert path.read_text() == "x = 3\ny = 2\nx = 3\n"
    assert outcome.summary().endswith(", 2 replacements")


def test_patch_file_dry_run_leaves_the_file_untouched_but_shows_the_diff(tmp_path):
    path = aged(tmp_path / "app.py", b"a = 1\n")
    before = snapshot(path)
    outcome = patch_file(path, "a = 1", "a = 2", dry_run=True)
    assert snapshot(path) == before
    assert outcome.changed is True
    assert "+a = 2" in outcome.diff


def test_patch_file_binary_file_is_refused_untouched(tmp_path):
    path = aged(tmp_path / "blob.bin", b"abc\x00def")
    before = snapshot(path)
    with pytest.raises(neta.ToolError, match="binary"):
        patch_file(path, "abc", "xyz")
    assert snapshot(path) == before


def test_patch_file_non_utf8_file_is_refused_untouched(tmp_path):
    path = aged(tmp_path / "latin1.txt", "naïve\n".encode("latin-1"))
    before = snapshot(path)
    with pytest.raises(neta.ToolError, match="not UTF-8"):
        patch_file(path, "na", "NA")
    assert snapshot(path) == before


def test_patch_file_missing_file_is_a_tool_error(tmp_path):
    with pytest.raises(neta.ToolError, match="no such file"):
        patch_file(tmp_path / "missing.py", "a", "b")


def test_patch_file_keeps_a_second_bom_that_is_content(tmp_path):
    path = tmp_path / "twice.txt"
    path.write_bytes(b"\xef\xbb\xbf\xef\xbb\xbfa = 1\n")
    patch_file(path, "a = 1", "a = 2")
    assert path.read_bytes() == b"\xef\xbb\xbf\xef\xbb\xbfa = 2\n"


def test_patch_file_refused_by_a_stale_line_leaves_bytes_and_mtime_unchanged(tmp_path):
    source = b"def f():\r\n    a = 1\r\n    b = load(x)\r\n    c = 3\r\n    return a\r\n"
    path = aged(tmp_path / "app.py", source)
    before = snapshot(path)
    old = "def f():\n    a = 1\n    b = load(y)\n    c = 3\n    return a\n"
    with pytest.raises(neta.fuzzy_match.NoMatchError, match="not the file's"):
        patch_file(path, old, old.replace("    c = 3\n", "    b = load(y)\n    c = 3\n"))
    assert snapshot(path) == before


def test_patch_file_escape_mismatch_is_refused_untouched(tmp_path):
    path = aged(tmp_path / "app.py", b"x = 1\ny = 2\n")
    before = snapshot(path)
    with pytest.raises(neta.fuzzy_match.InvalidEditError, match="real line breaks"):
        patch_file(path, "x = 1\\ny = 2", 'x = 1\ny = "\\n"')
    assert snapshot(path) == before


def test_patch_file_line_strategy_edit_keeps_crlf_and_joins_no_lines(tmp_path):
    path = tmp_path / "dos.py"
    path.write_bytes(b"if a:\r\n    b()\r\nc()\r\n")
    outcome = patch_file(path, "if a:\n  b()\n", "if a:\n  b(1)")
    assert path.read_bytes() == b"if a:\r\n    b(1)\r\nc()\r\n"
    assert (outcome.strategy, outcome.start_line, outcome.end_line) == ("indent_flexible", 1, 2)


def test_patch_file_of_a_read_only_file_is_refused_untouched(tmp_path):
    path = aged(tmp_path / "locked.py", b"a = 1\n")
    path.chmod(0o444)
    before = snapshot(path)
    with pytest.raises(neta.ToolError, match="read-only"):
        patch_file(path, "a = 1", "a = 2")
    assert snapshot(path) == before


def test_patch_file_confined_to_a_root_refuses_a_symlink_out(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    outside = aged(tmp_path / "outside.py", b"a = 1\n")
    (root / "link.py").symlink_to(outside)
    before = snapshot(outside)
    with pytest.raises(neta.WorkspaceError):
        patch_file("link.py", "a = 1", "a = 2", root=root)
    assert snapshot(outside) == before
