"""``neta patch`` in a real subprocess: fuzzy edits, dry runs, refusals, JSON."""

import json
import os
import subprocess
import sys

import pytest

from neta.cli.patch_cmd import in_flag_names
from tests.core.cli.cli_runner import neta_in_process
from tests.services import neta_environ

OLD_NS = 1_000_000_000_000_000_000


def neta(cwd, *args, stdin=None):
    return neta_in_process(*args, input_text=stdin, cwd=cwd, env=neta_environ())


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "app.py"
    path.write_bytes(b"def main():\n    print('hello')\n    return 0\n")
    os.utime(path, ns=(OLD_NS, OLD_NS))
    return path


def snapshot(path):
    return path.read_bytes(), os.stat(path).st_mtime_ns


def test_patch_command_applies_a_fuzzy_match_and_prints_the_strategy(tmp_path, source):
    done = neta(
        tmp_path,
        "patch",
        "app.py",
        "--old",
        "print('hello')\nreturn 0",
        "--new",
        "print('bye')\nreturn 1",
    )
    assert done.returncode == 0, done.stderr
    assert source.read_bytes() == b"def main():\n    print('bye')\n    return 1\n"
    assert "-    print('hello')" in done.stdout
    assert "+    print('bye')" in done.stdout
    last = done.stdout.splitlines()[-1]
    assert last.startswith("strategy: ")
    assert not last.startswith("strategy: exact")
    assert last.endswith("lines 2\u20133")


def test_patch_command_dry_run_leaves_the_file_untouched(tmp_path, source):
    before = snapshot(source)
    done = neta(tmp_path, "patch", "app.py", "--old", "return 0", "--new", "return 1", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "+    return 1" in done.stdout
    assert "dry run" in done.stdout
    assert snapshot(source) == before


def test_patch_command_refusal_is_an_error_exit_1_and_file_byte_identical(tmp_path, source):
    before = snapshot(source)
    done = neta(tmp_path, "patch", "app.py", "--old", "no such text anywhere", "--new", "x")
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0].startswith("Error: --old was not found")
    assert all(line.strip() for line in lines)
    assert "old_string" not in done.stderr
    assert snapshot(source) == before


def test_patch_refusal_names_the_command_line_flags(tmp_path):
    (tmp_path / "twice.txt").write_text("a\n  b\n  b\nc\n")
    done = neta(tmp_path, "patch", "twice.txt", "--old", "  b", "--new", "  x")
    assert done.returncode == 1
    assert "--replace-all" in done.stderr
    assert "replace_all" not in done.stderr
    assert "old_string" not in done.stderr


SIGNATURE = "def patch(old_string, new_string, replace_all=False):"


def quoted(message, label):
    """The text a refusal quotes after ``label``, its whitespace markers turned back."""
    prefix = f"    {label}:"
    lines = [line for line in message.split("\n") if line.startswith(prefix)]
    assert len(lines) == 1, message
    return lines[0][len(prefix) :].lstrip(" ").replace("\u00b7", " ").replace("\u2192", "\t")


@pytest.mark.parametrize("as_json", [False, True])
def test_patch_refusal_quotes_the_file_and_old_text_exactly_even_with_argument_names(
    tmp_path, as_json
):
    (tmp_path / "k.py").write_text(SIGNATURE + "\n    pass\n")
    old = "def patch(old_string, new_strng, replace_all=False):"
    done = neta(tmp_path, "patch", "k.py", "--old", old, "--new", "x", *(["--json"] * as_json))
    assert done.returncode == 1
    message = json.loads(done.stdout)["error"] if as_json else done.stderr.removeprefix("Error: ")
    assert quoted(message, "file") == SIGNATURE
    assert quoted(message, "--old") == old
    assert message.startswith("--old was not found")
    assert "copy --old exactly" in message


def test_patch_refusal_quotes_a_placeholder_line_exactly(tmp_path, source):
    old = "def main():\n    # ... old_string and replace_all unchanged ...\n    return 9"
    done = neta(tmp_path, "patch", "app.py", "--old", old, "--new", "x", "--json")
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert error.startswith("--old was not found")
    assert "'# ... old_string and replace_all unchanged ...'" in error
    assert "--old must be the file's real text" in error


def test_patch_refusal_about_the_file_keeps_its_name(tmp_path):
    (tmp_path / "old_string.bin").write_bytes(b"ab\x00cd")
    done = neta(tmp_path, "patch", "old_string.bin", "--old", "ab", "--new", "xy")
    assert done.returncode == 1
    assert done.stderr.startswith("Error: old_string.bin is a binary file")


def test_in_flag_names_renames_arguments_only_outside_quoted_text():
    message = (
        "new_string's line '\\'old_string\\' \"replace_all\"' cannot be placed. Set old_string.\n"
        "- line 2 (the same in the file and old_string)\n"
        "    file:       replace_all(old_string)\u2028new_string \x0c\n"
        "    old_string: replace_all(new_string)\n"
        "Or set replace_all to true."
    )
    assert in_flag_names(message) == (
        "--new's line '\\'old_string\\' \"replace_all\"' cannot be placed. Set --old.\n"
        "- line 2 (the same in the file and --old)\n"
        "    file:  replace_all(old_string)\u2028new_string \x0c\n"
        "    --old: replace_all(new_string)\n"
        "Or give --replace-all."
    )


def test_patch_json_reports_a_refusal_as_json(tmp_path, source):
    done = neta(tmp_path, "patch", "app.py", "--old", "no such text", "--new", "x", "--json")
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["changed"] is False
    assert result["error"].startswith("--old was not found")


def test_patch_old_file_from_stdin_keeps_its_newlines(tmp_path):
    (tmp_path / "g.txt").write_text("a\n  b\nc\n")
    done = subprocess.run(
        [sys.executable, "-m", "neta", "patch", "g.txt", "--old-file", "-", "--new", "  x"],
        input="  b\n", capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "g.txt").read_text() == "a\n  x\nc\n"


def test_patch_command_binary_file_is_refused_with_exit_1(tmp_path):
    (tmp_path / "blob.bin").write_bytes(b"ab\x00cd")
    done = neta(tmp_path, "patch", "blob.bin", "--old", "ab", "--new", "xy")
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ")
    assert "binary" in done.stderr
    assert (tmp_path / "blob.bin").read_bytes() == b"ab\x00cd"


def test_patch_command_json_prints_the_outcome(tmp_path, source):
    done = neta(tmp_path, "patch", "app.py", "--old", "return 0", "--new", "return 2", "--json")
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome == {
        "path": "app.py",
        "strategy": "exact",
        "count": 1,
        "start_line": 3,
        "end_line": 3,
        "changed": True,
        "diff": outcome["diff"],
    }
    assert "+    return 2" in outcome["diff"]


def test_patch_command_reads_old_and_new_from_files_keeping_their_bytes(tmp_path):
    target = tmp_path / "dos.txt"
    target.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (tmp_path / "old.txt").write_bytes(b"one\r\ntwo\r\n")
    (tmp_path / "new.txt").write_bytes(b"uno\r\ndos\r\n")
    done = neta(tmp_path, "patch", "dos.txt", "--old-file", "old.txt", "--new-file", "new.txt")
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == b"uno\r\ndos\r\nthree\r\n"


def test_patch_command_reads_new_text_from_stdin(tmp_path, source):
    done = neta(
        tmp_path, "patch", "app.py", "--old", "return 0", "--new-file", "-", stdin="return 7"
    )
    assert done.returncode == 0, done.stderr
    assert b"    return 7\n" in source.read_bytes()


@pytest.mark.parametrize(
    "options",
    [
        ["--new", "x"],
        ["--old", "a", "--old-file", "old.txt", "--new", "x"],
        ["--old", "a"],
        ["--old", "a", "--new", "x", "--new-file", "new.txt"],
    ],
)
def test_patch_command_needs_exactly_one_of_each_pair_else_exit_2(tmp_path, source, options):
    before = snapshot(source)
    done = neta(tmp_path, "patch", "app.py", *options)
    assert done.returncode == 2
    assert done.stderr.startswith("Error: give exactly one of --")
    assert snapshot(source) == before


def test_patch_refusal_on_stderr_keeps_the_spaces_of_what_it_quotes(tmp_path, source):
    old = "def main():\n    #  ...  rest  of  it  ...\n    return 9"
    done = neta(tmp_path, "patch", "app.py", "--old", old, "--new", "x")
    assert done.returncode == 1
    assert done.stderr.startswith("Error: --old was not found")
    assert "'#  ...  rest  of  it  ...'" in done.stderr
