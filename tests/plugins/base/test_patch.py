"""The patch tool: fuzzy edits inside the workspace; refusals leave the file untouched."""

import os
import subprocess
import sys

import pytest

import neta
import neta.fuzzy_match
from neta_base import patch
from tests.plugins.base.conftest import PEAK_KIB

OLD_NS = 1_000_000_000_000_000_000


def aged(path, data):
    path.write_bytes(data)
    os.utime(path, ns=(OLD_NS, OLD_NS))
    return path


def snapshot(path):
    return path.read_bytes(), os.stat(path).st_mtime_ns


def test_patch_as_a_function_applies_an_edit_and_reports_strategy_and_lines(session):
    (session.workspace / "app.py").write_text("a = 1\nb = 2\n")
    tool = patch.build(session)
    result = tool.execute(patch.PatchArgs(path="app.py", old_string="b = 2", new_string="b = 3"))
    assert (session.workspace / "app.py").read_text() == "a = 1\nb = 3\n"
    assert result.content.splitlines()[-1] == "strategy: exact, lines 2\u20132"
    assert "--- a/app.py" in result.content
    assert "+b = 3" in result.content
    assert result.data["strategy"] == "exact"


def test_patch_through_the_catalog_matches_despite_different_indentation(call, session):
    path = session.workspace / "mod.py"
    path.write_text("class A:\n    def f(self):\n        return 1\n")
    result = call(
        "patch",
        path="mod.py",
        old_string="def f(self):\n    return 1",
        new_string="def f(self):\n    return 2",
    )
    assert path.read_text() == "class A:\n    def f(self):\n        return 2\n"
    assert result.data["strategy"] != "exact"
    assert f"strategy: {result.data['strategy']}, lines 2\u20133" in result.content


def test_patch_no_match_is_the_matchers_error_and_the_file_is_untouched(call, session):
    path = aged(session.workspace / "app.py", b"a = 1\n")
    before = snapshot(path)
    with pytest.raises(neta.fuzzy_match.MatchError) as caught:
        call("patch", path="app.py", old_string="zzz = 42", new_string="y")
    assert str(caught.value)
    assert snapshot(path) == before


def test_patch_ambiguous_match_is_refused_and_the_file_is_untouched(call, session):
    path = aged(session.workspace / "app.py", b"x = 1\nx = 1\n")
    before = snapshot(path)
    with pytest.raises(neta.fuzzy_match.AmbiguousMatchError):
        call("patch", path="app.py", old_string="x = 1", new_string="x = 2")
    assert snapshot(path) == before


def test_patch_replace_all_reports_the_count(call, session):
    (session.workspace / "app.py").write_text("x = 1\nx = 1\n")
    result = call("patch", path="app.py", old_string="x = 1", new_string="x = 2", replace_all=True)
    assert (session.workspace / "app.py").read_text() == "x = 2\nx = 2\n"
    assert result.content.endswith(", 2 replacements")
    assert result.data["count"] == 2


def test_patch_keeps_crlf_bytes(call, session):
    path = session.workspace / "dos.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    call("patch", path="dos.txt", old_string="two", new_string="TWO")
    assert path.read_bytes() == b"one\r\nTWO\r\n"


def test_patch_binary_file_is_a_clear_error_and_untouched(call, session):
    path = aged(session.workspace / "blob.bin", b"ab\x00cd")
    before = snapshot(path)
    with pytest.raises(neta.ToolError, match="binary"):
        call("patch", path="blob.bin", old_string="ab", new_string="xy")
    assert snapshot(path) == before


def test_patch_non_utf8_file_is_a_clear_error(call, session):
    aged(session.workspace / "latin1.txt", "élan\n".encode("latin-1"))
    with pytest.raises(neta.ToolError, match="not UTF-8"):
        call("patch", path="latin1.txt", old_string="lan", new_string="LAN")


def test_patch_outside_the_workspace_is_refused_and_the_file_untouched(call, session):
    outside = aged(session.workspace.parent / "other.py", b"a = 1\n")
    before = snapshot(outside)
    with pytest.raises(neta.WorkspaceError):
        call("patch", path="../other.py", old_string="a = 1", new_string="a = 2")
    assert snapshot(outside) == before


def test_patch_that_would_write_a_stale_line_is_refused_and_untouched(call, session):
    path = aged(
        session.workspace / "app.py", b"def f():\n    a = 1\n    b = load(x)\n    return a\n"
    )
    before = snapshot(path)
    old = "def f():\n    a = 1\n    b = load(y)\n    return a"
    with pytest.raises(neta.fuzzy_match.NoMatchError) as caught:
        call(
            "patch",
            path="app.py",
            old_string=old,
            new_string=old.replace("a = 1", "a = 2\n" + "    b = load(y)"),
        )
    assert "line 3" in str(caught.value)
    assert snapshot(path) == before


def test_patch_adding_lines_where_old_skips_a_line_is_refused_naming_it(call, session):
    path = aged(
        session.workspace / "hosts.py",
        b'def allowed(hostname):\n    if hostname.endswith(".internal"):\n'
        b"        return False\n    return True\n",
    )
    before = snapshot(path)
    old = 'def allowed(hostname):\n    if hostname.endswith(".internal"):\n    return True\n'
    new = old.replace("    return True", "    log(hostname)\n    return True")
    with pytest.raises(neta.fuzzy_match.NoMatchError) as caught:
        call("patch", path="hosts.py", old_string=old, new_string=new)
    assert "line 3 (old_string skips it)" in str(caught.value)
    assert snapshot(path) == before


def test_patch_closing_brace_matched_at_another_depth_is_refused_and_untouched(call, session):
    path = aged(
        session.workspace / "store.go",
        b"func load() {\n\tif ok {\n\t\treturn\n\t}\n}\n",
    )
    before = snapshot(path)
    with pytest.raises(neta.fuzzy_match.NoMatchError) as caught:
        call(
            "patch",
            path="store.go",
            old_string="\t\treturn\n}",
            new_string="\t\treturn\n}\n\nfunc save() {\n}",
        )
    assert "line 4 is nested unlike" in str(caught.value)
    assert snapshot(path) == before


def test_patch_guidance_warns_against_placeholders_in_new_string():
    assert "never abbreviate" in patch.SCHEMA.guidance


def test_patch_of_a_fifo_without_writer_is_refused_at_once(call, fifo, quick):
    with pytest.raises(neta.ToolError, match="not a regular file"):
        quick(lambda: call("patch", path="pipe", old_string="a", new_string="b"))


def test_patch_of_a_read_only_file_is_refused_and_leaves_it_untouched(call, session):
    path = aged(session.workspace / "locked.py", b"a = 1\n")
    path.chmod(0o444)
    before = snapshot(path)
    with pytest.raises(neta.ToolError, match="read-only"):
        call("patch", path="locked.py", old_string="a = 1", new_string="a = 2")
    assert snapshot(path) == before


def test_patch_of_a_file_over_the_limit_is_refused_without_loading_it(session):
    huge = session.workspace / "huge.py"
    with huge.open("wb") as handle:
        handle.truncate(2 * 1024**3)  # 2 GiB, sparse
    script = (
        f"{PEAK_KIB}"
        "import neta, neta_base.patch as p\n"
        f"session = neta.SessionContext(workspace={str(session.workspace)!r})\n"
        "tool = p.build(session)\n"
        "try:\n"
        "    tool.execute(p.PatchArgs(path='huge.py', old_string='a', new_string='b'))\n"
        "except neta.ToolError as exc:\n"
        "    print('refused:', exc)\n"
        "print(peak_kib())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "refused:" in done.stdout
    assert "too large" in done.stdout
    assert int(done.stdout.split()[-1]) < 100 * 1024, done.stdout


def test_patch_lone_surrogate_in_new_string_is_a_tool_error_and_leaves_the_file(call, session):
    path = aged(session.workspace / "app.py", b"a = 1\n")
    before = snapshot(path)
    with pytest.raises(neta.ToolError, match="surrogate"):
        call("patch", path="app.py", old_string="a = 1", new_string="a = '\udfff'")
    assert snapshot(path) == before


def test_patch_shows_a_path_with_control_characters_escaped(call, session):
    (session.workspace / "a\nb.py").write_text("x = 1\n")
    result = call("patch", path="a\nb.py", old_string="x = 1", new_string="x = 2")
    assert "a/a\\nb.py" in result.content
    assert result.data["path"] == "a\\nb.py"
