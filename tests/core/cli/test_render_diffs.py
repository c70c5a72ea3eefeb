"""``neta run`` shows the whole diff of every file change; ``-v`` shows every result whole;
a huge diff goes to the pager at a terminal, and is printed anywhere else."""

import json
import sys

import pytest

from neta.cli import pager
from tests.core.cli.cli_runner import neta_in_process
from tests.core.cli.test_render_running_tools import RunTerminal
from tests.services import neta_environ

OLD = "".join(f"value_{n} = {n}\n" for n in range(1, 21))
NEW = "".join(f"value_{n} = {n * 10}\n" for n in range(1, 21))


def run(tmp_path, turns, *flags, **env):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    argv = ["run", "edit it", "--script", str(script), "-w", str(tmp_path), "--mode", "auto"]
    done = neta_in_process(*argv, *flags, env=neta_environ(COLUMNS="200", **env))
    assert done.returncode == 0, done.stderr
    return done.stderr


def edit(name, **arguments):
    return [{"tool_calls": [{"name": name, "arguments": arguments}]}, {"text": "Edited."}]


def test_a_twenty_line_patch_shows_its_whole_diff(tmp_path):
    (tmp_path / "values.py").write_text(OLD)
    shown = run(tmp_path, edit("patch", path="values.py", old_string=OLD, new_string=NEW))
    for n in range(1, 21):
        assert f"  -value_{n} = {n}\n" in shown
        assert f"  +value_{n} = {n * 10}\n" in shown
    assert "strategy: exact" in shown  # the patch's summary after the diff


def test_write_file_shows_the_diff_of_what_it_changed(tmp_path):
    (tmp_path / "values.py").write_text(OLD)
    shown = run(tmp_path, edit("write_file", path="values.py", content=NEW))
    assert "✓ Overwrote values.py" in shown
    assert "  --- a/values.py" in shown
    for n in range(1, 21):
        assert f"  -value_{n} = {n}\n" in shown
        assert f"  +value_{n} = {n * 10}\n" in shown


def test_a_long_result_is_cut_saying_how_to_see_it_and_verbose_shows_it_whole(tmp_path):
    (tmp_path / "long.txt").write_text("".join(f"line {n}\n" for n in range(30)))
    turns = edit("read_file", path="long.txt")
    cut = run(tmp_path, turns)
    assert "line 7" in cut
    assert "line 29" not in cut
    assert "… 22 more lines (-v shows all)" in cut
    whole = run(tmp_path, turns, "-v")
    assert "line 29" in whole
    assert "more lines" not in whole


def test_verbose_shows_a_call_s_arguments_whole(tmp_path):
    (tmp_path / "values.py").write_text(OLD)
    turns = edit("patch", path="values.py", old_string=OLD, new_string=NEW)
    assert "    value_20 = 20\n" not in run(tmp_path, turns)  # the argument is cut at 8 lines
    (tmp_path / "values.py").write_text(OLD)
    assert "    value_20 = 20\n" in run(tmp_path, turns, "--verbose")


def test_chat_takes_verbose_too(tmp_path):
    (tmp_path / "long.txt").write_text("".join(f"line {n}\n" for n in range(30)))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": edit("read_file", path="long.txt")}))
    argv = ["chat", "--script", str(script), "-w", str(tmp_path), "--mode", "auto", "-v"]
    done = neta_in_process(*argv, input_text="read it\n", env=neta_environ(COLUMNS="200"))
    assert done.returncode == 0, done.stderr
    assert "line 29" in done.stderr


def test_a_huge_diff_is_printed_whole_not_paged_when_the_output_is_not_a_terminal(tmp_path):
    marker = tmp_path / "paged"
    big_old = "".join(f"row {n}\n" for n in range(pager.PAGE_LINES + 50))
    big_new = big_old.replace("row", "ROW")
    (tmp_path / "big.txt").write_text(big_old)
    shown = run(
        tmp_path,
        edit("write_file", path="big.txt", content=big_new),
        PAGER=f"cat > {marker}",
    )
    assert not marker.exists()
    assert f"  +ROW {pager.PAGE_LINES + 49}\n" in shown
    assert "in the pager" not in shown


def test_the_pager_is_offered_only_when_every_standard_stream_is_a_terminal():
    assert pager.terminal_pager() is None  # the test's streams are not terminals


def test_page_runs_the_user_s_pager_and_says_when_it_cannot(tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setenv("PAGER", f"cat > {out}")
    assert pager.page("\x1b[32m+new\x1b[0m\n")
    assert out.read_text() == "\x1b[32m+new\x1b[0m\n"  # colours kept for less -R
    monkeypatch.setenv("PAGER", "no-such-pager-here")
    assert not pager.page("text\n")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_a_huge_diff_at_a_terminal_goes_to_the_pager(tmp_path):
    paged = tmp_path / "paged"
    rows = pager.PAGE_LINES + 50
    big_old = "".join(f"row {n}\n" for n in range(rows))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "big.txt").write_text(big_old)
    script = tmp_path / "script.json"
    call = {"name": "write_file", "arguments": {"path": "big.txt", "content": big_old.upper()}}
    script.write_text(json.dumps({"turns": [{"tool_calls": [call]}, {"text": "Edited."}]}))
    term = RunTerminal(
        "run", "edit it", "--script", str(script), "-w", str(workspace), "--mode", "auto",
        PAGER=f"cat > {paged}",
    )  # fmt: skip
    screen = term.expect("Edited.")
    assert term.wait() == 0
    assert "lines: in the pager)" in screen
    assert f"+ROW {rows - 1}" not in screen  # the diff is in the pager, not on the screen
    text = paged.read_text()
    assert f"+ROW {rows - 1}" in text
    assert "\x1b[32m" in text  # coloured
