"""``neta run``, ``neta chat`` and ``neta prompt`` in real subprocesses."""

import json
import re
import secrets
import subprocess
import sys
from pathlib import Path

from neta import ProviderSpec, create_plugin_manager, hookimpl
from tests.core.cli.cli_runner import neta_in_process
from tests.processes import running_with, wait_none_running_with
from tests.services import neta_environ, require_sandbox


def neta(*args, input_text=None, cwd=None, env_extra=None):
    env = neta_environ(**(env_extra or {}))
    return neta_in_process(*args, input_text=input_text, env=env, cwd=cwd)


def write_script(tmp_path, turns):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": turns}))
    return str(path)


def test_run_reads_a_file_and_prints_the_answer(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the secret is 42\n")
    script = write_script(
        tmp_path,
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {"text": "The secret is 42.", "expect": {"last_message_contains": "the secret is 42"}},
        ],
    )
    done = neta(
        "run", "what is the secret?", "-p", "scripted", "--script", script, "-w", str(workspace)
    )
    assert done.returncode == 0, done.stderr
    assert "→ read_file path='notes.txt'" in done.stderr
    assert done.stdout == "The secret is 42.\n"  # the answer alone: `> answer.txt` holds it
    # the script reports no tokens: the line counts none rather than "0 tokens"
    assert re.fullmatch(r"2 turns, 1 tool call, \d+\.\d s", done.stderr.splitlines()[-1])


def test_run_json_prints_outcome_events_and_usage(tmp_path):
    script = write_script(
        tmp_path, [{"text": "hi", "usage": {"input_tokens": 3, "output_tokens": 1}}]
    )
    done = neta("run", "hello", "-p", "scripted", "--script", script, "-w", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["outcome"] == "completed"
    assert data["text"] == "hi"
    assert data["usage"] == {
        "input_tokens": 3,
        "output_tokens": 1,
        "cache_read_tokens": 0,
        "cache_creation_tokens": 0,
    }
    assert [e["type"] for e in data["events"]] == ["run_started", "text_delta", "run_finished"]


def test_run_reaching_max_turns_exits_one_with_the_reason(tmp_path):
    turns = [{"tool_calls": [{"name": "list_dir", "arguments": {}}]}] * 3
    script = write_script(tmp_path, turns)
    done = neta(
        "run", "loop", "-p", "scripted", "--script", script, "-w", str(tmp_path), "--max-turns", "2"
    )
    assert done.returncode == 1
    assert "Run ended: max_turns: stopped after 2 turns" in done.stderr
    assert done.stdout == ""


def test_run_with_openai_and_no_key_is_a_one_line_config_error(tmp_path):
    done = neta("run", "hello", "-w", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith("Error: the openai provider needs an API key or a base URL")
    assert len(done.stderr.splitlines()) == 1


def test_unknown_provider_suggests_a_close_name(tmp_path):
    done = neta("run", "hello", "-p", "scriptd", "-w", str(tmp_path))
    assert done.returncode == 2
    assert "did you mean 'scripted'?" in done.stderr


def test_chat_keeps_history_between_messages(tmp_path):
    script = write_script(
        tmp_path,
        [
            {"text": "Nice to meet you, Ada."},
            {"text": "Your name is Ada.", "expect": {"last_message_contains": "my name"}},
        ],
    )
    done = neta(
        "chat",
        "-p",
        "scripted",
        "--script",
        script,
        "-w",
        str(tmp_path),
        input_text="I am Ada\nwhat is my name?\n/exit\n",
    )
    assert done.returncode == 0, done.stderr
    assert "Nice to meet you, Ada." in done.stdout
    assert "Your name is Ada." in done.stdout


def test_prompt_prints_the_system_prompt_for_base(tmp_path):
    done = neta("prompt", "-w", str(tmp_path), env_extra={"NETA_LOAD_PLUGINS": "base"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("You are Neta")
    assert "## patch" in done.stdout
    assert f"- Workspace: {tmp_path.resolve()}" in done.stdout


def test_prompt_for_a_crew_child_never_mentions_clarify_or_delegation(tmp_path):
    child = neta("prompt", "--entry", "crew", "-w", str(tmp_path))
    top = neta("prompt", "-w", str(tmp_path))
    assert child.returncode == 0, child.stderr
    assert "clarify" not in child.stdout
    assert "delegate_task" not in child.stdout
    assert "## escalate" in child.stdout
    assert "## clarify" in top.stdout
    assert "## delegate_task" in top.stdout
    assert re.search(r"\bescalate\b", top.stdout) is None  # the status "escalated" may appear


class _Unjsonable:
    def __str__(self):
        return "odd value"


def test_run_json_stays_valid_when_a_tool_returns_data_json_has_no_type_for():
    from neta.cli.run_report import result_json
    from neta.events import RunFinished, ToolResultEvent
    from neta.messages import Usage
    from neta.runtime.agent import RunResult

    event = ToolResultEvent(
        call_id="c", name="t", content="ok", data={"path": Path("/x"), "odd": _Unjsonable()}
    )
    result = RunResult(
        text="done",
        outcome="completed",
        reason="",
        messages=[],
        events=[event, RunFinished(outcome="completed", text="done")],
        usage=Usage(),
        turns=1,
        session_id="s",
    )
    data = json.loads(json.dumps(result_json(result)))
    assert data["events"][0]["data"] == {"path": "/x", "odd": "odd value"}


def test_renderer_shows_a_tool_name_with_brackets_literally():
    import io

    from rich.console import Console

    from neta.cli.render import EventRenderer
    from neta.events import ToolCallStart

    out = io.StringIO()
    EventRenderer(Console(file=out, width=200))(
        ToolCallStart(call_id="c", name="[/oops]", arguments="{}")
    )
    assert "→ [/oops] {}" in out.getvalue()


class _Recorder:
    """Records session ends; provides a provider that fails in a way no one planned for."""

    def __init__(self):
        self.ended = []

    @hookimpl
    def neta_session_end(self, session):
        self.ended.append(session.session_id)

    @hookimpl
    def neta_providers(self):
        return [ProviderSpec(name="crashing", factory=lambda **_: _Crashing())]


class _Crashing:
    async def complete(self, request, on_text):
        raise RuntimeError("provider bug")


def invoke(pm, *args):
    from typer.testing import CliRunner

    from neta.cli.app import CliState, app

    return CliRunner().invoke(app, list(args), obj=CliState(pm))


def test_run_tells_plugins_the_session_ended_even_when_the_run_fails(tmp_path):
    recorder = _Recorder()
    pm = create_plugin_manager(load_entrypoints=False, plugins=[("recorder", recorder)])
    done = invoke(pm, "run", "hi", "-p", "crashing", "-w", str(tmp_path))
    assert isinstance(done.exception, RuntimeError)
    assert len(recorder.ended) == 1


def test_tools_call_tells_plugins_the_session_ended(tmp_path):
    import neta_base.plugin

    recorder = _Recorder()
    pm = create_plugin_manager(
        load_entrypoints=False, plugins=[("base", neta_base.plugin), ("recorder", recorder)]
    )
    done = invoke(pm, "tools", "call", "list_dir", "-w", str(tmp_path))
    assert done.exit_code == 0, done.output
    assert len(recorder.ended) == 1


def test_run_whose_answer_was_cut_off_says_so(tmp_path):
    script = write_script(tmp_path, [{"text": "The answer is", "finish_reason": "length"}])
    done = neta("run", "q", "-p", "scripted", "--script", script, "-w", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "The answer is\n"
    assert done.stderr.splitlines()[-2:-1] == [
        "Note: the reply was cut off at the model's output token limit"
    ]


def test_renderer_prints_the_answer_exactly_as_the_model_wrote_it():
    import io

    from rich.console import Console

    from neta.cli.render import EventRenderer
    from neta.events import RunFinished, TextDelta

    answer = "word " * 40 + "[bold]x[/] :smile: " + "x" * 100
    out = io.StringIO()
    render = EventRenderer(Console(file=out, width=80))
    render(TextDelta(text=answer))
    render(RunFinished(outcome="completed"))
    assert out.getvalue() == answer + "\n"  # not wrapped at the console width, nothing parsed


def closed_stdin(tmp_path, *args):
    import shlex

    command = shlex.join([sys.executable, "-m", "neta", *args]) + " <&-"
    env = neta_environ()
    return subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def test_run_without_any_standard_input_still_runs(tmp_path):
    script = write_script(tmp_path, [{"text": "fine without stdin"}])
    done = closed_stdin(tmp_path, "run", "q", "-p", "scripted", "--script", script)
    assert done.returncode == 0, done.stderr
    assert "fine without stdin" in done.stdout


def test_chat_without_any_standard_input_ends_quietly(tmp_path):
    script = write_script(tmp_path, [])
    done = closed_stdin(tmp_path, "chat", "-p", "scripted", "--script", script)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_ctrl_c_during_a_run_exits_130_and_stops_its_tools(tmp_path):
    require_sandbox()  # its bash call runs in the default sandbox
    import signal
    import time

    started, finished = tmp_path / "started", tmp_path / "finished"
    # the shell marks that it runs, then would go on to touch `finished` had it not been
    # killed; the host finds its processes by their unique sleep
    tag = f"5.{secrets.randbelow(10**6):06d}"
    command = f"touch {started} && sleep {tag} && touch {finished}"
    script = write_script(
        tmp_path, [{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}]
    )
    env = neta_environ()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "neta",
            "run",
            "go",
            "-p",
            "scripted",
            "--script",
            script,
            "-w",
            str(tmp_path),
            "--no-input",
            "--mode",
            "auto",  # Ctrl-C is tested, not asking before the command runs
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while not started.exists():  # the bash call is running
            assert time.monotonic() < deadline
            assert proc.poll() is None
            time.sleep(0.05)
        assert running_with(tag)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Interrupted." in err
    # gone before the command would have reached `touch`
    assert wait_none_running_with(tag, 4) == [], "the tool's shell outlived the run"
    assert not finished.exists()
