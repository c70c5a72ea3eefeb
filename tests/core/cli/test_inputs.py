"""Inputs are checked before anything runs, and every error is one line that says what to do."""

import json
import socket

import pytest
from pydantic import BaseModel

from neta import Tool, ToolSchema, ToolsetSpec, create_plugin_manager, hookimpl
from neta.errors import ConfigError, NetaError
from neta.providers.scripted import ScriptedProvider
from tests.core.cli.cli_runner import run_neta

COMMANDS = [
    ["run", "hi", "--script", "{script}"],
    ["chat", "--script", "{script}"],
    ["serve", "--script", "{script}", "--port", "1"],
    ["tools", "call", "list_dir"],
    ["prompt"],
]


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": [{"text": "hello"}]}))
    return str(path)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_workspace_that_is_not_a_directory_is_a_usage_error(
    capsys, tmp_path, script, command, kind
):
    bad = tmp_path / "nowhere"
    if kind == "file":
        bad.write_text("not a directory")
    args = [a.format(script=script) for a in command]
    done = run_neta(capsys, *args, "-w", str(bad))
    assert done.code == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("Error: Invalid value for '--workspace'")
    assert ("does not exist" if kind == "missing" else "is a file, not a directory") in line
    assert json.loads(run_neta(capsys, "logs", "--json").stdout) == []


def test_script_alone_implies_the_scripted_provider(capsys, tmp_path, script):
    done = run_neta(capsys, "run", "hi", "--script", script, "-w", str(tmp_path))
    assert done.code == 0, done.stderr
    assert done.stdout == "hello\n"


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        ([{"txt": "hi"}], "turn 1: unknown key 'txt'"),
        (
            [{"text": "a"}, {"text": "b", "expect": {"last_message_contain": "x"}}],
            "turn 2.expect: unknown key 'last_message_contain'",
        ),
    ],
)
def test_a_script_with_an_unknown_key_is_refused_before_the_run(capsys, tmp_path, turns, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"turns": turns}))
    done = run_neta(capsys, "run", "hi", "--script", str(path), "-w", str(tmp_path))
    assert done.code == 2
    [line] = done.stderr.splitlines()
    assert line.startswith("Error: ")
    assert message in line
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        ScriptedProvider(turns)


def test_a_failed_expect_fails_the_run_naming_the_turn_and_the_expectation(capsys, tmp_path):
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps({"turns": [{"text": "x", "expect": {"last_message_contains": "banana"}}]})
    )
    done = run_neta(capsys, "run", "apple", "--script", str(path), "-w", str(tmp_path))
    assert done.code == 1
    assert "scripted turn 1: expect failed: last message 'apple' lacks 'banana'" in done.stderr
    assert done.stdout == ""


def test_serve_on_a_busy_port_is_one_clear_error(capsys, tmp_path, script):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = run_neta(
            capsys, "serve", "--script", script, "-w", str(tmp_path), "--port", str(port)
        )
    assert done.code == 2  # a failed start
    assert done.stderr == (
        f"Error: port {port} on 127.0.0.1 is already in use (another `neta serve`?); "
        "stop it or pick another with --port\n"
    )


def test_disabling_an_unknown_plugin_warns_with_a_suggestion(capsys, monkeypatch):
    monkeypatch.setenv("NETA_DISABLE_PLUGINS", "bse")
    done = run_neta(capsys, "plugins")
    assert done.code == 0
    assert (
        "Warning: NETA_DISABLE_PLUGINS names 'bse', but no installed plugin has that name; "
        "did you mean 'base'?"
    ) in done.stderr


def test_loading_an_unknown_plugin_warns_with_a_suggestion(capsys, monkeypatch):
    monkeypatch.setenv("NETA_LOAD_PLUGINS", "bse")
    done = run_neta(capsys, "plugins")
    assert "did you mean 'base'?" in done.stderr


def test_an_unknown_option_is_one_line_saying_where_help_is(capsys):
    done = run_neta(capsys, "run", "--nope")
    assert done.code == 2
    assert done.stderr.splitlines() == [
        "Error: No such option: --nope (Possible options: --mode, --no-input, --otel) "
        "(see 'neta run -h')"
    ]


def test_an_unexpected_exception_is_not_shown_as_the_error(capsys, tmp_path, monkeypatch):
    from neta.cli import run_cmd

    def broken(*args, **kwargs):
        raise TypeError("OpenAIProvider.__init__() got an unexpected keyword argument 'script'")

    monkeypatch.setattr(run_cmd, "build_agent", broken)
    done = run_neta(capsys, "run", "hi", "-w", str(tmp_path))
    assert done.code == 1
    [line] = done.stderr.splitlines()
    assert line.startswith("Error: unexpected TypeError")
    assert "--debug" in line
    assert "__init__" not in line
    debug = run_neta(capsys, "run", "hi", "-w", str(tmp_path), "--debug")  # after the command
    assert "Traceback" in debug.stderr
    assert "unexpected keyword argument 'script'" in debug.stderr


def test_run_json_prints_json_on_stdout_also_on_failure(capsys, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"turns": [{"txt": "x"}]}')
    done = run_neta(capsys, "run", "hi", "--script", str(path), "-w", str(tmp_path), "--json")
    assert done.code == 2
    result = json.loads(done.stdout)
    assert result["outcome"] == "error"
    assert "unknown key 'txt'" in result["reason"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["hi", "-w", "{tmp}/nope"], "does not exist"),  # an option's own check
        (["hi", "--max-turns", "0"], "--max-turns"),
        (["", "-w", "{tmp}"], "the task is empty"),  # checked by the command itself
        (["hi", "-c", "-w", "{tmp}"], "no conversation"),
        (["--json", "hi", "-w", "{tmp}", "--no-such-option"], "No such option"),  # --json first
    ],
    ids=["workspace", "max-turns", "empty task", "nothing to continue", "unknown option"],
)
def test_run_json_prints_json_on_stdout_for_usage_errors_too(capsys, tmp_path, args, said):
    script = tmp_path / "s.json"
    script.write_text('{"turns": [{"text": "done"}]}')
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    done = run_neta(capsys, "run", *args, "--script", str(script), "--json")
    assert done.code == 2, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert (result["outcome"], result["text"], result["session_id"]) == ("error", "", None)
    assert said in result["reason"]
    assert done.stderr.startswith("Error: ")  # as without --json
    assert said in done.stderr


class _Raising:
    """A plugin whose one tool raises what no tool should."""

    class Args(BaseModel):
        pass

    @hookimpl
    def neta_toolsets(self):
        return [ToolsetSpec(name="fragile", description="breaks")]

    @hookimpl
    def neta_tools(self):
        return [ToolSchema(name="crash", toolset="fragile", description="Crash.", args=self.Args)]

    @hookimpl
    def neta_build_tools(self, session):
        def crash(args):
            raise KeyError("boom")

        return [Tool(name="crash", execute=crash)]


def test_tools_call_of_a_tool_that_raises_names_the_tool_and_the_exception_type(tmp_path):
    from typer.testing import CliRunner

    from neta.cli.app import CliState, app

    pm = create_plugin_manager(load_entrypoints=False, plugins=[("fragile", _Raising())])
    done = CliRunner().invoke(
        app, ["tools", "call", "crash", "-w", str(tmp_path)], obj=CliState(pm)
    )
    assert isinstance(done.exception, NetaError)
    assert str(done.exception) == "tool 'crash' raised KeyError: 'boom'"


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize(
    ("arguments", "environ", "message"),
    [
        (["-p", "scripted"], {}, "Error: the scripted provider needs a script: --script FILE.json"),
        (
            ["--script", "{script}"],
            {"NETA_DATABASE_URL": "mysql://db.example/neta"},
            "Error: unknown session store 'mysql': use a postgresql:// URL",
        ),
    ],
    ids=["provider", "store"],
)
def test_serve_whose_agent_cannot_be_built_says_so_before_serving(
    capsys, monkeypatch, tmp_path, script, workers, arguments, environ, message
):
    # several workers each build the agent in a process of their own: the command checks it
    # first, rather than each worker failing with a traceback and being started again
    monkeypatch.setenv("NETA_REDIS_URL", "redis://127.0.0.1:1/0")  # never reached
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    args = [a.format(script=script) for a in arguments]
    done = run_neta(
        capsys, "serve", *args, "--workers", workers, "-w", str(tmp_path), "--port", "0"
    )
    assert done.code == 2
    assert done.stdout == ""  # not "Neta serving on ..."
    assert done.stderr == message + "\n"


def test_a_neta_home_that_is_a_file_is_a_configuration_error_said_plainly(
    capsys, monkeypatch, tmp_path
):
    home = tmp_path / "home"
    home.write_text("")
    monkeypatch.setenv("NETA_HOME", str(home))
    done = run_neta(capsys, "logs")
    assert done.code == 2
    assert done.stderr == f"Error: NETA_HOME {str(home)!r} is a file; set it to a directory\n"


def test_a_script_that_is_a_folder_is_refused_in_plain_words(capsys, tmp_path):
    done = run_neta(capsys, "run", "hi", "--script", str(tmp_path), "-w", str(tmp_path))
    assert done.code == 2
    assert done.stderr == (
        f"Error: cannot load script {str(tmp_path)!r}: it is a directory, not a file\n"
    )


def test_serve_with_a_neta_home_that_is_a_file_is_a_configuration_error(
    capsys, monkeypatch, tmp_path
):
    from neta.cli import serve_cmd

    monkeypatch.setattr(serve_cmd, "_serve_app", lambda *_: pytest.fail("it served"))
    home = tmp_path / "home"
    home.write_text("")
    monkeypatch.setenv("NETA_HOME", str(home))
    script = tmp_path / "s.json"
    script.write_text('{"turns": [{"text": "done"}]}')
    done = run_neta(capsys, "serve", "--script", str(script), "--port", "0", "-w", str(tmp_path))
    assert done.code == 2, done.stderr
    assert done.stderr == f"Error: NETA_HOME {str(home)!r} is a file; set it to a directory\n"
