"""The command line and the sandbox: ``--sandbox``, ``--network``, ``neta doctor``, the demo."""

import json
import secrets
import subprocess
import sys

import pytest

from tests.core.cli.cli_runner import neta_in_process
from tests.services import listening_port, neta_environ, require_sandbox

SECRET = "s3cr3t-" + secrets.token_hex(8)


@pytest.fixture(autouse=True)
def sandbox_here():
    """bubblewrap, or a skip (a failure under ``NETA_REQUIRE_SERVICES=1``) saying why."""
    require_sandbox()


def script_of(tmp_path, *commands):
    turns = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}
        for command in commands
    ]
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": [*turns, {"text": "done"}]}))
    return str(path)


def neta_process(tmp_path, *args, **env):
    """A real ``neta`` process, as a user starts it: its secrets in its own environment."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    done = subprocess.run(
        # --mode auto: the sandbox is what is tested, not asking before a command runs
        [sys.executable, "-m", "neta", *args, "-w", str(workspace), "--json", "--mode", "auto"],
        capture_output=True,
        text=True,
        env=neta_environ(NETA_HOME=str(tmp_path / "home"), **env),
        timeout=60,
        check=False,
    )
    return done


def neta_here(tmp_path, *args, **env):
    """``neta_process``, in this process: for what needs no host process of its own."""
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    environ = neta_environ(NETA_HOME=str(tmp_path / "home"), **env)
    return neta_in_process(*args, "-w", str(workspace), "--json", "--mode", "auto", env=environ)


def tool_outputs(done):
    result = json.loads(done.stdout)
    return [e["content"] for e in result["events"] if e["type"] == "tool_result"]


def test_neta_run_commands_cannot_read_the_hosts_environment_through_proc(tmp_path):
    script = script_of(
        tmp_path,
        "tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/1/environ; env",
    )
    done = neta_process(
        tmp_path,
        "run",
        "look around",
        "--script",
        script,
        OPENAI_API_KEY=SECRET,
        NETA_TOKEN=SECRET,
        NETA_REDIS_URL=f"redis://:{SECRET}@127.0.0.1:1/0",
    )
    assert done.returncode == 0, done.stderr
    [output] = tool_outputs(done)
    assert "PATH=" in output
    assert SECRET not in output


def test_neta_run_sandbox_off_runs_with_the_users_authority(tmp_path):
    outside = tmp_path / "outside"
    script = script_of(tmp_path, f"touch {outside}")
    done = neta_here(tmp_path, "run", "touch", "--script", script)
    assert done.returncode == 0, done.stderr
    assert not outside.exists()
    done = neta_here(tmp_path, "run", "touch", "--script", script, "--sandbox", "off")
    assert done.returncode == 0, done.stderr
    assert outside.exists()


def test_neta_run_network_lets_commands_reach_a_port(tmp_path):
    with listening_port() as port:
        script = script_of(tmp_path, f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED")
        closed = neta_here(tmp_path, "run", "connect", "--script", script)
        opened = neta_here(tmp_path, "run", "connect", "--script", script, "--network")
    assert "CONNECTED" not in tool_outputs(closed)[0]
    assert "CONNECTED" in tool_outputs(opened)[0]


def test_neta_run_without_bubblewrap_refuses_the_command_in_one_line(tmp_path):
    marker = tmp_path / "ws" / "ran"
    script = script_of(tmp_path, f"touch {marker}")
    done = neta_here(
        tmp_path, "run", "touch", "--script", script, NETA_BWRAP=str(tmp_path / "no-bwrap")
    )
    [output] = tool_outputs(done)
    assert output.count("\n") == 0
    assert "cannot be sandboxed" in output
    assert "--sandbox off" in output
    assert not marker.exists()


def test_sandbox_takes_only_on_or_off():
    done = neta_in_process("run", "x", "--sandbox", "maybe", env=neta_environ())
    assert done.returncode == 2
    assert "'maybe' is not one of on, off" in done.stderr


def test_doctor_says_commands_are_sandboxed_here():
    done = neta_in_process("doctor", env=neta_environ())
    assert done.returncode == 0
    assert done.stdout.startswith("commands: sandboxed (bubblewrap")


def test_doctor_without_bubblewrap_says_what_to_do_and_exits_1(tmp_path):
    done = neta_in_process("doctor", "--json", env=neta_environ(NETA_BWRAP=str(tmp_path / "x")))
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["sandbox"]["available"] is False
    assert "--sandbox off" in report["sandbox"]["reason"]


def test_tools_list_ends_with_the_sandbox_line():
    done = neta_in_process("tools", "list", env=neta_environ(COLUMNS="200"))
    assert done.returncode == 0
    assert done.stdout.rstrip().splitlines()[-1].startswith("commands: sandboxed")


def test_demo_without_bubblewrap_says_in_one_line_that_it_runs_unsandboxed(tmp_path):
    env = neta_environ(NETA_BWRAP=str(tmp_path / "no-bwrap"), COLUMNS="300")
    done = neta_in_process("demo", env=env)
    assert done.returncode == 0, done.stdout
    lines = [line for line in done.stdout.splitlines() if "unsandboxed" in line]
    assert len(lines) == 1
    assert "bubblewrap is not available here" in lines[0]


def test_demo_with_bubblewrap_runs_sandboxed_and_says_nothing_of_it():
    done = neta_in_process("demo", env=neta_environ(COLUMNS="300"))
    assert done.returncode == 0
    assert "unsandboxed" not in done.stdout
