"""bash in the sandbox: what a prompt-injected model runs cannot reach the host.

Each test runs real commands under bubblewrap, as a session gets them by default, and checks
from the host's side what they could see, write, reach or leave running.
"""

import asyncio
import os
import secrets
import shlex
import socket
import time
from pathlib import Path

import pytest

import neta
import neta.sandbox
from neta.sandbox import _bwrap
from neta_base import bash
from tests.processes import running_with, wait_none_running_with
from tests.services import listening_port, require_sandbox

SECRET = "s3cr3t-" + secrets.token_hex(8)


@pytest.fixture(autouse=True)
def sandbox_here():
    """bubblewrap, or a skip (a failure under ``NETA_REQUIRE_SERVICES=1``) saying why."""
    require_sandbox()


@pytest.fixture
def host_secrets(monkeypatch, tmp_path):
    """The host's secrets, where a host keeps them: its environment, home and NETA_HOME."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SECRET)
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(SECRET)
    (home / ".netrc").write_text(SECRET)
    neta_home = tmp_path / "neta-home"
    neta_home.mkdir()
    (neta_home / "neta.db").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("NETA_HOME", str(neta_home))
    monkeypatch.setenv("NETA_TOKEN", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("NETA_SERVE_WORKER_SETTINGS", f'{{"token": "{SECRET}"}}')
    monkeypatch.setenv("NETA_REDIS_URL", f"redis://:{SECRET}@127.0.0.1:6379/0")
    monkeypatch.setenv("NETA_DATABASE_URL", f"postgresql://neta:{SECRET}@127.0.0.1/neta")
    monkeypatch.setenv("CACHE_URL", f"redis://127.0.0.1/0?password={SECRET}")
    return {"home": home, "neta_home": neta_home}


def run(session, command, timeout=30):
    tool = bash.build(session)
    return asyncio.run(tool.invoke(bash.BashArgs(command=command, timeout=timeout)))


def test_no_process_environment_in_the_sandbox_holds_a_host_secret(session, host_secrets):
    result = run(
        session,
        "cat /proc/1/environ /proc/$PPID/environ /proc/$$/environ | tr '\\0' '\\n'; "
        "for f in /proc/[0-9]*/environ; do cat $f; done | tr '\\0' '\\n'; env",
    )
    assert "[exit code 0]" in result.content
    assert "PATH=" in result.content
    assert SECRET not in result.content
    assert "NETA_" not in result.content


def test_the_hosts_processes_are_invisible(session):
    result = run(session, "ls /proc | grep -c '^[0-9]'; cat /proc/[0-9]*/comm")
    count, *names = result.content.split("\n[exit")[0].split()
    assert int(count) < 10  # the sandbox's own few, not the host's
    assert set(names) <= {"bwrap", "prlimit", "bash", "ls", "grep", "cat"}


def test_home_credentials_and_neta_home_cannot_be_read(session, host_secrets):
    home, neta_home = host_secrets["home"], host_secrets["neta_home"]
    result = run(
        session,
        f"cat {home}/.ssh/id_* {home}/.aws/credentials {home}/.netrc {neta_home}/neta.db; "
        f"ls -A {home} {neta_home} ~",
    )
    assert SECRET not in result.content
    assert "No such file or directory" in result.content


def test_neta_home_inside_the_workspace_stays_hidden(session, monkeypatch):
    neta_home = session.workspace / ".neta-home"
    neta_home.mkdir()
    (neta_home / "neta.db").write_text(SECRET)
    (session.workspace / "visible.txt").write_text("mine")
    monkeypatch.setenv("NETA_HOME", str(neta_home))
    result = run(session, f"cat visible.txt; echo; cat {neta_home}/neta.db; ls -A {neta_home}")
    assert result.content.startswith("mine\n")
    assert SECRET not in result.content


def test_only_the_workspace_is_written(session, tmp_path):
    marker = f"outside-{secrets.token_hex(4)}"
    home = Path(os.environ.get("HOME", "/root"))
    result = run(
        session,
        f"echo ok > inside.txt; touch /tmp/{marker} ~/{marker} {tmp_path}/{marker}; "
        f"touch /usr/{marker} /etc/{marker} 2>&1 | grep -c 'Read-only' ",
    )
    assert (session.workspace / "inside.txt").read_text() == "ok\n"
    assert result.content.startswith("2\n")
    for where in (Path("/tmp"), home, tmp_path, Path("/usr"), Path("/etc")):
        assert not (where / marker).exists(), where


def test_a_loopback_port_on_the_host_cannot_be_reached(session):
    with listening_port() as port:
        result = run(session, f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED")
    assert "CONNECTED" not in result.content
    assert "[exit code 1]" in result.content


def test_network_on_lets_a_command_reach_the_host(session):
    session.sandbox = neta.SandboxPolicy(network=True)
    with listening_port() as port:
        result = run(session, f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED")
    assert "CONNECTED" in result.content


def test_host_sockets_under_run_are_hidden(session, tmp_path):
    # (a folder shown again, a venv under /tmp say, leaves its path in /tmp: no socket)
    with socket.socket(socket.AF_UNIX) as host_side:
        host_side.bind(str(tmp_path / "h.sock"))
        result = run(session, "find /run /var/run /tmp /dev/shm -type s 2>/dev/null | grep -c .")
    assert result.content.startswith("0\n")


def escapes(tag: str) -> str:
    """Commands that start ``sleep tag`` every way a process can leave its parent."""
    sleep = f"sleep {tag}"
    return (
        f"env -i {sleep} > /dev/null 2>&1 &\n"
        f"setsid {sleep} > /dev/null 2>&1 < /dev/null &\n"
        f"nohup {sleep} > /dev/null 2>&1 &\n"
        f"( ( {sleep} > /dev/null 2>&1 & ) & )\n"
        f"setsid env -i sh -c '( {sleep} & )' > /dev/null 2>&1 &\n"
    )


def unique_sleep() -> str:
    return f"600.{secrets.randbelow(10**6):06d}"


def test_every_process_a_call_started_is_gone_when_it_ends(session):
    tag = unique_sleep()
    result = run(session, escapes(tag) + "sleep 0.5; ps -e | grep -c 'sleep'")
    assert result.content.startswith("5\n")  # all five escapes ran inside the call
    assert wait_none_running_with(tag) == []


def test_a_timed_out_call_takes_every_process_with_it(session):
    tag = unique_sleep()
    result = run(session, escapes(tag) + f"sleep {tag}", timeout=1)
    assert result.data["timed_out"] is True
    assert wait_none_running_with(tag) == []


def test_a_cancelled_call_takes_every_process_with_it(session):
    tag = unique_sleep()
    tool = bash.build(session)

    async def cancel_midway():
        task = asyncio.create_task(tool.invoke(bash.BashArgs(command=escapes(tag) + "sleep 60")))
        deadline = time.monotonic() + 10
        while len(running_with(tag)) < 5 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert len(running_with(tag)) >= 5  # the five, and the sandbox whose command names them
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_midway())
    assert wait_none_running_with(tag) == []


FORK_UNTIL_REFUSED = """
import os, time
forked = 0
while forked < 1000:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(3)
        os._exit(0)
    forked += 1
print(forked)
"""


def test_a_fork_bomb_meets_the_process_limit_and_ends_with_the_call(session):
    session.sandbox = neta.SandboxPolicy(limits=neta.sandbox.SandboxLimits(processes=40))
    counted = run(session, f"python3 -c {shlex.quote(FORK_UNTIL_REFUSED)}")
    assert 30 <= int(counted.content.split()[0]) < 40
    bomb = run(session, "bomb() { bomb | bomb & }; bomb; sleep 3; echo after", timeout=2)
    assert bomb.data["timed_out"] is True or "[exit code" in bomb.content
    assert wait_none_running_with("bomb") == []


def test_a_huge_write_stops_at_the_file_size_limit(session):
    session.sandbox = neta.SandboxPolicy(limits=neta.sandbox.SandboxLimits(file_size=1_000_000))
    result = run(session, "head -c 50000000 /dev/zero > big; echo status=$?")
    assert (session.workspace / "big").stat().st_size == 1_000_000
    assert "File size limit exceeded" in result.content


def test_default_limits_are_set_inside(session):
    result = run(session, "ulimit -u; ulimit -f; ulimit -t; ulimit -n")
    limits = neta.sandbox.SandboxLimits()
    assert result.content.split()[:4] == [
        str(limits.processes),
        str(limits.file_size // 1024),  # bash counts file size in KiB
        str(limits.cpu_seconds),
        str(limits.open_files),
    ]


def test_the_environment_comes_from_an_allow_list(session, monkeypatch):
    monkeypatch.setenv("HARMLESS_SETTING", "kept-out")
    monkeypatch.setenv("NETA_BASH_ENV_ALLOW", "MY_TOOL_*,NETA_TOKEN,OPENAI_API_KEY,CACHE_URL")
    monkeypatch.setenv("MY_TOOL_MODE", "fast")
    monkeypatch.setenv("NETA_TOKEN", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("CACHE_URL", f"https://user:{SECRET}@cache.example/")
    result = run(session, "env | sort")
    names = {line.split("=", 1)[0] for line in result.content.splitlines() if "=" in line}
    assert "HARMLESS_SETTING" not in names
    assert "MY_TOOL_MODE=fast" in result.content
    assert {"PATH", "HOME", "PAGER"} <= names
    assert SECRET not in result.content
    assert not any(name.startswith("NETA_") for name in names)


def test_a_missing_bubblewrap_is_a_one_line_refusal_and_nothing_runs(session, monkeypatch):
    monkeypatch.setenv(_bwrap.BWRAP_VARIABLE, str(session.workspace / "no-bwrap"))
    with pytest.raises(neta.ToolError) as refused:
        run(session, "touch ran")
    message = str(refused.value)
    assert "\n" not in message
    assert "apt-get install bubblewrap" in message or "not a file" in message
    assert "--sandbox off" in message
    assert not (session.workspace / "ran").exists()


def test_a_bwrap_that_cannot_make_namespaces_is_a_refusal(session, monkeypatch, tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv(_bwrap.BWRAP_VARIABLE, str(fake))
    with pytest.raises(neta.ToolError, match="No permissions to create new namespace"):
        run(session, "touch ran")
    assert not (session.workspace / "ran").exists()


def test_sandbox_off_runs_with_the_hosts_authority(session, tmp_path):
    session.sandbox = neta.SandboxPolicy(enabled=False)
    marker = tmp_path / "outside"
    run(session, f"touch {marker}")
    assert marker.exists()
