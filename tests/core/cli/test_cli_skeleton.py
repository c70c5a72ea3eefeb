"""The command line with plugins installed in a temporary directory.

Most commands run in-process (``plugin_dir.neta``); the ones about a new process finding the
plugins, and ``python -m neta`` itself, run in real subprocesses (``plugin_dir.neta_process``).
"""

import json

from tests.core.test_plugins import echo_source


def test_core_alone_cli_runs_every_listing_without_error(plugin_dir):
    for args in (["plugins"], ["toolsets"], ["tools", "list"], ["plugins", "--json"]):
        done = plugin_dir.neta(*args, NETA_LOAD_PLUGINS="")
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
    assert json.loads(plugin_dir.neta("plugins", "--json", NETA_LOAD_PLUGINS="").stdout) == []


def test_temp_plugin_appears_in_tools_list_and_tools_call_runs_it(plugin_dir):
    plugin_dir.add("neta-tools-parrot", "neta_tmp_parrot", echo_source("parrot", "birds"))
    listed = plugin_dir.neta("tools", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["parrot"]["plugin"] == "neta_tmp_parrot"
    assert rows["parrot"]["toolset"] == "birds"

    # a new process finds the installed plugin through its entry point and runs its tool
    called = plugin_dir.neta_process("tools", "call", "parrot", "--args", '{"text": "polly"}')
    assert called.returncode == 0, called.stderr
    assert called.stdout == "parrot says polly\n"


def test_broken_plugin_is_one_warning_line_and_the_rest_still_lists(plugin_dir):
    plugin_dir.add("neta-tools-ok", "neta_tmp_ok", echo_source("fine", "okset"))
    plugin_dir.add("neta-tools-bad", "neta_tmp_bad", "import does_not_exist_anywhere\n")
    done = plugin_dir.neta("tools", "list", "--json")
    assert done.returncode == 0
    assert "fine" in {row["name"] for row in json.loads(done.stdout)}
    lines = done.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("Warning: plugin 'neta_tmp_bad' (entry point neta:neta_tmp_bad")
    assert "ModuleNotFoundError" in lines[0]


def test_conflicting_plugins_are_one_warning_line_naming_both(plugin_dir):
    plugin_dir.add("neta-tools-one", "neta_tmp_one", echo_source("same", "oneset"))
    plugin_dir.add("neta-tools-two", "neta_tmp_two", echo_source("same", "twoset"))
    done = plugin_dir.neta("tools", "list")
    assert done.returncode == 0
    [line] = done.stderr.splitlines()
    assert "'neta_tmp_one'" in line
    assert "'neta_tmp_two'" in line
    assert "'same'" in line


def test_unknown_tool_is_one_error_line_with_a_suggestion(plugin_dir):
    plugin_dir.add("neta-tools-kiwi", "neta_tmp_kiwi", echo_source("kiwi_bird", "kiwis"))
    done = plugin_dir.neta("tools", "show", "kiwi_brd")
    assert done.returncode == 2
    assert done.stderr == "Error: unknown tool 'kiwi_brd'; did you mean 'kiwi_bird'?\n"


def test_invalid_tool_arguments_are_one_error_line(plugin_dir):
    plugin_dir.add("neta-tools-emu", "neta_tmp_emu", echo_source("emu", "emus"))
    done = plugin_dir.neta("tools", "call", "emu", "--args", '{"txt": 1}')
    assert done.returncode == 2
    assert done.stderr == "Error: invalid arguments for 'emu': text: Field required\n"


def test_tools_show_prints_the_json_schema(plugin_dir):
    plugin_dir.add("neta-tools-owl", "neta_tmp_owl", echo_source("owl", "owls"))
    done = plugin_dir.neta("tools", "show", "owl")
    assert done.returncode == 0, done.stderr
    assert '"text"' in done.stdout
    assert "toolset owls" in done.stdout


def test_builtin_toolsets_are_listed_with_their_reason(plugin_dir):
    done = plugin_dir.neta("toolsets", "--json", NETA_LOAD_PLUGINS="base,planning,interaction")
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["base"]["enabled"] is True
    assert rows["base"]["reason"] == "on by default"
    assert set(rows) >= {"base", "planning", "interaction"}


def test_python_dash_m_and_usage_errors_exit_two(plugin_dir):
    done = plugin_dir.neta_process("tools", "frobnicate")
    assert done.returncode == 2
    assert "No such command" in done.stderr


def test_plugin_calling_sys_exit_at_import_is_one_warning_line(plugin_dir):
    plugin_dir.add("neta-tools-quits", "neta_tmp_quits", "import sys\nsys.exit('usage: quits')\n")
    plugin_dir.add("neta-tools-wren", "neta_tmp_wren", echo_source("wren", "wrens"))
    done = plugin_dir.neta("tools", "list", "--json")
    assert done.returncode == 0, done.stderr
    assert "wren" in {row["name"] for row in json.loads(done.stdout)}
    [line] = done.stderr.splitlines()
    assert line.startswith("Warning: plugin 'neta_tmp_quits'")
    assert "SystemExit: usage: quits" in line


def test_debug_shows_where_a_broken_plugin_failed(plugin_dir):
    plugin_dir.add("neta-tools-deep", "neta_tmp_deep", "def f():\n    {}['missing']\nf()\n")
    quiet = plugin_dir.neta("plugins")
    loud = plugin_dir.neta("--debug", "plugins")
    assert len(quiet.stderr.splitlines()) == 1
    assert "Traceback (most recent call last)" in loud.stderr
    assert "neta_tmp_deep.py" in loud.stderr
    assert loud.stderr.count("Warning: plugin 'neta_tmp_deep'") == 1


BRACKETS_SOURCE = """
import neta
from pydantic import BaseModel

class Args(BaseModel):
    text: str

@neta.hookimpl
def neta_toolsets():
    return [neta.ToolsetSpec(name="brackets", description="Uses [/x] and list[str] → ü.")]

@neta.hookimpl
def neta_tools():
    return [neta.ToolSchema(
        name="bracketed", toolset="brackets", description="Takes [/path] and list[str] → ü.",
        args=Args,
    )]

@neta.hookimpl
def neta_build_tools(session):
    return [neta.Tool(name="bracketed", execute=lambda a: "→ ü " + a.text)]
"""


def test_listings_show_descriptions_with_brackets_literally(plugin_dir):
    plugin_dir.add("neta-tools-brackets", "neta_tmp_brackets", BRACKETS_SOURCE)
    done = plugin_dir.neta("tools", "list", "-t", "brackets", COLUMNS="200")
    assert done.returncode == 0, done.stderr
    assert "Takes [/path] and list[str] → ü." in done.stdout


def test_output_on_a_terminal_that_cannot_show_unicode_degrades_instead_of_failing(plugin_dir):
    plugin_dir.add("neta-tools-brackets", "neta_tmp_brackets", BRACKETS_SOURCE)
    # what PYTHONIOENCODING=ascii gives a process: strict ascii stdout, backslashreplace stderr
    ascii_only = {"encoding": "ascii", "COLUMNS": "200"}
    listed = plugin_dir.neta("tools", "list", **ascii_only)
    assert listed.returncode == 0, listed.stderr
    assert "Takes [/path] and list[str] ? ?." in listed.stdout
    called = plugin_dir.neta("tools", "call", "bracketed", "--args", '{"text": "x"}', **ascii_only)
    assert called.returncode == 0, called.stderr
    assert called.stdout.endswith(" x\n")
    as_json = plugin_dir.neta("tools", "list", "--json", **ascii_only)
    assert as_json.returncode == 0, as_json.stderr
    rows = {row["name"]: row for row in json.loads(as_json.stdout)}
    assert rows["bracketed"]["description"] == "Takes [/path] and list[str] → ü."


def test_chat_warns_about_a_broken_plugin_once_and_before_the_first_prompt(plugin_dir, tmp_path):
    plugin_dir.add("neta-tools-cracked", "neta_tmp_cracked", "import no_such_module_here\n")
    script = tmp_path / "script.json"
    script.write_text('{"turns": []}')
    done = plugin_dir.neta(
        "chat", "-p", "scripted", "--script", str(script), input_text="/exit\n", together=True
    )
    assert done.returncode == 0, done.stdout
    assert done.stdout.count("Warning: plugin 'neta_tmp_cracked'") == 1
    assert done.stdout.index("Warning: plugin 'neta_tmp_cracked'") < done.stdout.index(
        "neta chat ·"
    )


def test_tools_list_says_no_for_a_tool_its_plugin_could_not_build(plugin_dir):
    unbuildable = echo_source("fragile", "flaky").replace(
        'return [neta.Tool(name="fragile"',
        'raise RuntimeError("no device")\n    return [neta.Tool(name="fragile"',
    )
    plugin_dir.add("neta-tools-fragile", "neta_tmp_fragile", unbuildable)
    listed = plugin_dir.neta("tools", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    [row] = [row for row in json.loads(listed.stdout) if row["name"] == "fragile"]
    assert row["enabled"] is False
    assert "could not be built" in row["reason"]
    assert "no device" in listed.stderr  # the plugin's failure, as one warning
    table = plugin_dir.neta("tools", "list")
    [line] = [line for line in table.stdout.splitlines() if "fragile" in line]
    assert " yes " not in line
