"""What every command does alike: -h, --version, --debug anywhere, toolset flags, help text."""

import json
import re

import pytest

from tests.core.cli.cli_runner import run_neta

COMMANDS = [
    [], ["run"], ["chat"], ["prompt"], ["serve"], ["logs"], ["patch"], ["plugins"],
    ["providers"], ["toolsets"], ["tools"], ["tools", "list"], ["tools", "call"], ["demo"],
    ["permissions"], ["permissions", "list"], ["permissions", "remove"], ["permissions", "check"],
]  # fmt: skip


def test_version_prints_the_version(capsys):
    done = run_neta(capsys, "--version")
    assert done.code == 0
    assert re.fullmatch(r"neta \d+\.\d+\.\d+\S*\n", done.stdout)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "neta")
def test_dash_h_shows_help_for_every_command(capsys, command):
    done = run_neta(capsys, *command, "-h")
    assert done.code == 0, done.stderr
    assert done.stdout.startswith("Usage: neta")
    assert "<bool>" not in done.stdout
    assert "``" not in done.stdout


@pytest.mark.parametrize("command", [[], ["tools"], ["mcp"]])
def test_a_command_given_nothing_to_do_shows_its_help_not_an_error(capsys, command):
    done = run_neta(capsys, *command)
    assert done.code == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout == run_neta(capsys, *command, "-h").stdout  # as -h prints it
    assert "Error" not in done.stdout


def test_help_names_the_environment_variables(capsys):
    run_help = run_neta(capsys, "run", "-h").stdout
    for variable in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL"):
        assert f"[env var: {variable}" in " ".join(run_help.split())
    assert "[env var: NETA_HOME]" in run_neta(capsys, "-h").stdout


@pytest.mark.parametrize("command", [["run"], ["chat"], ["prompt"], ["tools", "list"], ["serve"]])
def test_toolset_flags_are_the_same_everywhere(capsys, command):
    text = " ".join(run_neta(capsys, *command, "-h").stdout.split())
    assert "-t, --toolset NAME Request a toolset (repeatable)." in text
    assert "--deny NAME Deny a toolset (repeatable)." in text
    assert "--only NAME Exactly these toolsets, no defaults (repeatable)." in text


def test_prompt_only_base_prints_the_base_only_prompt(capsys, tmp_path):
    done = run_neta(capsys, "prompt", "--only", "base", "-w", str(tmp_path))
    assert done.code == 0, done.stderr
    assert "## patch" in done.stdout
    assert "## clarify" not in done.stdout
    assert "## todo" not in done.stdout


def test_tools_list_only_marks_the_other_toolsets_off(capsys):
    rows = json.loads(run_neta(capsys, "tools", "list", "--only", "base", "--json").stdout)
    on = {row["toolset"] for row in rows if row["enabled"]}
    assert on == {"base"}
    denied = json.loads(run_neta(capsys, "tools", "list", "--deny", "base", "--json").stdout)
    assert not any(row["enabled"] for row in denied if row["toolset"] == "base")


def test_debug_is_accepted_after_the_sub_command(capsys):
    done = run_neta(capsys, "plugins", "--debug")
    assert done.code == 0, done.stderr


TOOLSET_COMMANDS = [["run", "hi"], ["chat"], ["prompt"], ["tools", "list"], ["serve"]]


@pytest.fixture
def toolset_command(tmp_path, monkeypatch):
    """Run one of the commands taking toolset flags, offline: a scripted model, no server.

    Returns ``run(command, *flags)`` and the list of apps ``neta serve`` would have served.
    """
    from neta.cli import serve_cmd

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "done"}]}))
    served: list[object] = []
    monkeypatch.setattr(serve_cmd, "_serve_app", lambda app, *_: served.append(app))

    def run(capsys, command, *flags):
        model = ["--script", str(script)] if command[0] in ("run", "chat", "serve") else []
        port = ["--port", "0"] if command[0] == "serve" else []
        where = [] if command[0] == "tools" else ["-w", str(tmp_path)]
        return run_neta(capsys, *command, *model, *port, *where, *flags)

    return run, served


@pytest.mark.parametrize("command", TOOLSET_COMMANDS, ids=" ".join)
@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["-t", "nosuch"], "'nosuch'"),
        (["--only", "nosuch"], "'nosuch'"),
        (["-t", "plannig"], "did you mean 'planning'"),
        (["--deny", "plannig"], "did you mean 'planning'"),  # a typo would leave it on
    ],
)
def test_an_unknown_toolset_is_refused_alike_by_every_command_before_anything_runs(
    capsys, toolset_command, command, flags, named
):
    run, served = toolset_command
    done = run(capsys, command, *flags)
    assert done.code == 2, done.stdout + done.stderr
    assert done.stderr.startswith("Error: ")
    assert "unknown toolset" in done.stderr
    assert named in done.stderr
    assert served == []  # neta serve refused before serving
    assert json.loads(run_neta(capsys, "logs", "--json").stdout) == []  # no conversation kept


@pytest.mark.parametrize("command", TOOLSET_COMMANDS, ids=" ".join)
def test_denying_a_toolset_nothing_installs_is_accepted_by_every_command(
    capsys, toolset_command, command
):
    run, served = toolset_command
    done = run(capsys, command, "--deny", "kubernetes")
    assert done.code == 0, done.stdout + done.stderr
    assert len(served) == (command == ["serve"])


def test_serve_with_several_workers_refuses_an_unknown_toolset_before_starting_them(
    capsys, toolset_command, monkeypatch
):
    run, served = toolset_command
    monkeypatch.setenv("NETA_REDIS_URL", "redis://127.0.0.1:9/0")  # never reached
    done = run(capsys, ["serve"], "--workers", "2", "--only", "nosuch")
    assert done.code == 2, done.stdout + done.stderr
    assert "unknown toolset 'nosuch'" in done.stderr
    assert served == []


@pytest.mark.parametrize("command", [["run"], ["chat"], ["serve"]])
def test_help_lists_the_installed_providers(capsys, command):
    text = " ".join(run_neta(capsys, *command, "-h").stdout.split())
    assert "-p, --provider [openai|scripted|anthropic]" in text


def test_only_help_asks_the_plugins_for_their_providers(plugin_dir):
    plugin_dir.add(
        "neta-badprov",
        "badprov",
        """
        import neta

        @neta.hookimpl
        def neta_providers():
            raise RuntimeError("no SDK")
        """,
    )
    assert plugin_dir.neta("--version").stderr == ""
    helped = plugin_dir.neta("run", "-h")
    assert "--provider [openai|scripted" in " ".join(helped.stdout.split())
    assert "neta_providers() raised RuntimeError" in helped.stderr


def test_run_json_as_another_options_value_is_no_json_request(capsys, tmp_path):
    done = run_neta(capsys, "run", "--model", "--json", "--max-turns", "abc", "hi")
    assert done.code == 2
    assert done.stdout == ""
    assert done.stderr.startswith("Error: ")


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "neta")
def test_help_names_each_value_in_capitals_as_click_does(capsys, command):
    shown = run_neta(capsys, *command, "-h").stdout
    assert not re.search(r"<[a-z][a-z _\[\]]*>", shown), shown  # <str>, <list[str]>, <int range>
    assert not re.search(r"\{[a-z_]+\}", shown), shown  # {path}


def test_logs_list_refuses_an_id_and_says_what_shows_one(capsys):
    done = run_neta(capsys, "logs", "list", "abc123")
    assert done.code == 2
    assert "neta logs show abc123" in done.stderr


def test_a_tool_needing_a_model_says_where_it_runs_not_how_to_build_an_agent(capsys, tmp_path):
    done = run_neta(capsys, "tools", "call", "delegate_task", "--args", '{"goal": "look"}')
    assert "neta run" in done.stdout + done.stderr
    assert "provider=" not in done.stdout + done.stderr


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_shell_completion_scripts_come_by_either_convention(shell):
    import os
    import subprocess
    import sys

    for value in (f"{shell}_source", f"source_{shell}"):
        env = {**os.environ, "_NETA_COMPLETE": value}
        done = subprocess.run(
            [sys.executable, "-m", "neta"], env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert "_NETA_COMPLETE=complete_" in done.stdout
        assert "not supported" not in done.stdout + done.stderr


def test_bash_completion_completes_a_command_and_an_option():
    import os
    import subprocess
    import sys

    def complete(words, index):
        env = {
            **os.environ,
            "_NETA_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(index),
        }
        run = [sys.executable, "-m", "neta"]
        return subprocess.run(run, env=env, capture_output=True, text=True, timeout=60).stdout

    assert "run" in complete("neta ru", 1).split()
    assert "--max-turns" in complete("neta run --max-t", 2).split()


@pytest.mark.parametrize(
    "command", [["providers"], ["toolsets"], ["tools", "list"], ["plugins"], ["permissions"]]
)
def test_tables_on_a_narrow_terminal_wrap_and_never_cut_a_cell(command, monkeypatch):
    import subprocess
    import sys

    monkeypatch.setenv("COLUMNS", "60")
    done = subprocess.run(
        [sys.executable, "-m", "neta", *command], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout, done.stdout
