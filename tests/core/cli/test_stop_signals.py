"""SIGTERM, SIGHUP and Ctrl-C stop ``neta run`` and ``neta chat`` the same way: the run is
cancelled with its commands, the conversation is stored, the result is printed, and the process
exits 128 + the signal's number. Real ``neta`` processes, a real model server on loopback."""

import json
import os
import pty
import secrets
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

from neta.cli.conversations import Conversation, Conversations
from tests.core.cli.cli_runner import neta_in_process
from tests.core.cli.test_chat_pty import Terminal
from tests.fake_openai import FakeOpenAI, Reply
from tests.processes import running_with, wait_none_running_with
from tests.services import neta_environ, require_sandbox

MODEL = "stop-test-model"


def model_flags(server: FakeOpenAI) -> list[str]:
    return ["-p", "openai", "--base-url", server.base_url, "-m", MODEL, "--max-tries", "1"]


def start_neta(*args: str, stdin: int = subprocess.DEVNULL) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "neta", *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=neta_environ(OPENAI_API_KEY="k"),
    )


def neta(*args: str, input_text: str | None = None) -> subprocess.CompletedProcess[str]:
    return neta_in_process(*args, input_text=input_text, env=neta_environ(OPENAI_API_KEY="k"))


def wait_until(ready: Callable[[], object], proc: subprocess.Popen[str]) -> None:
    """Wait for ``ready`` while ``proc`` runs (a hung process fails the test, not the suite)."""
    deadline = time.monotonic() + 60
    while not ready():
        if proc.poll() is not None:
            _, err = proc.communicate()
            pytest.fail(f"neta ended early ({proc.returncode}): {err}")
        assert time.monotonic() < deadline, "neta never got there"
        time.sleep(0.05)


def stop(proc: subprocess.Popen[str], signum: int) -> tuple[str, str]:
    """Send ``signum``, and once ``neta`` has ended, what it printed.

    Its standard input stays open until then: the end of input would end a chat too.
    """
    proc.send_signal(signum)
    try:
        proc.wait(timeout=60)
        return proc.communicate()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def stored(session_id: str) -> dict[str, object]:
    shown = neta("logs", "show", session_id, "--json")
    assert shown.returncode == 0, shown.stderr
    data: dict[str, object] = json.loads(shown.stdout)
    return data


@pytest.mark.parametrize(
    ("signum", "status", "why", "sandbox"),
    [
        pytest.param(signal.SIGTERM, 143, "stopped by SIGTERM", "on", id="sigterm"),
        pytest.param(signal.SIGHUP, 129, "stopped by SIGHUP", "on", id="sighup"),
        pytest.param(signal.SIGINT, 130, "interrupted by Ctrl-C", "on", id="ctrl-c"),
        pytest.param(signal.SIGTERM, 143, "stopped by SIGTERM", "off", id="sigterm-unsandboxed"),
    ],
)
def test_a_stop_signal_during_a_command_ends_it_stores_the_run_and_prints_its_json(
    tmp_path, signum, status, why, sandbox
):
    if sandbox == "on":
        require_sandbox()
    started, finished = tmp_path / "started", tmp_path / "finished"
    tag = f"7.{secrets.randbelow(10**6):06d}"  # the command's processes, found by their sleep
    command = f"touch {started} && sleep {tag} && touch {finished}"
    replies = [
        Reply(tool_calls=[("bash", json.dumps({"command": command}))]),
        Reply(text="Went on after the stop."),
    ]
    with FakeOpenAI(replies) as server:
        proc = start_neta(
            "run", "go", *model_flags(server), "-w", str(tmp_path), "--mode", "auto",
            "--sandbox", sandbox, "--json",
        )  # fmt: skip
        wait_until(started.exists, proc)
        assert running_with(tag)
        out, err = stop(proc, signum)

        assert proc.returncode == status, err
        result = json.loads(out)
        assert result["outcome"] == "cancelled"
        assert result["reason"].startswith(why)
        assert [e["type"] for e in result["events"]][-1] == "run_finished"
        assert wait_none_running_with(tag, 10) == [], "the run's command outlived it"
        assert not finished.exists()
        kept = stored(result["session_id"])
        assert kept["outcome"] == "cancelled"
        assert kept["model"] == MODEL
        assert [m["role"] for m in kept["messages"]] == ["user", "assistant", "tool"]

        again = neta("run", "-c", "go on", *model_flags(server), "-w", str(tmp_path), "--json")
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["session_id"] == result["session_id"]
        assert server.rejected == []


def test_sigterm_while_chat_waits_for_a_trickling_reply_stores_it_and_exits_143(tmp_path):
    replies = [
        Reply(text="a slow answer " * 200, trickle=0.1),
        Reply(text="Hello again."),
    ]
    with FakeOpenAI(replies) as server:
        proc = start_neta("chat", *model_flags(server), "-w", str(tmp_path), stdin=subprocess.PIPE)
        assert proc.stdin is not None
        proc.stdin.write("hello\n")
        proc.stdin.flush()
        wait_until(lambda: server.requests, proc)  # the reply trickles in
        _, err = stop(proc, signal.SIGTERM)

        assert proc.returncode == 143, err
        assert "Turn cancelled" in err
        assert "Stopped by SIGTERM." in err
        row = only_conversation()
        stored_history = Conversations()
        try:
            history = stored_history.history(row.session_id)
        finally:
            stored_history.close()
        assert row.outcome == "cancelled"
        assert (row.provider, row.model, row.base_url) == ("openai", MODEL, server.base_url)
        assert history == []  # the model never answered "hello": it is not kept

        again = neta("chat", "-c", "-w", str(tmp_path), input_text="hello again\n")
        assert again.returncode == 0, again.stderr
        assert "Hello again." in again.stdout
        users = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "user"]
        assert users == ["hello again"]
        assert server.requests[1]["model"] == MODEL
        assert server.rejected == []


def test_sigterm_at_the_chat_prompt_leaves_with_143_and_the_conversation_kept(tmp_path):
    with FakeOpenAI([Reply(text="Hi there.")]) as server:
        proc = start_neta("chat", *model_flags(server), "-w", str(tmp_path), stdin=subprocess.PIPE)
        assert proc.stdin is not None
        proc.stdin.write("hello\n")
        proc.stdin.flush()

        def answered() -> bool:
            return [row.outcome for row in conversations()] == ["completed"]

        wait_until(answered, proc)  # back at the prompt, reading the next line
        out, err = stop(proc, signal.SIGTERM)
        assert proc.returncode == 143, err
        assert "Hi there." in out
        assert "Stopped by SIGTERM." in err
        assert server.rejected == []


def close_terminal(pid: int, fd: int) -> int:
    """Close the terminal ``neta`` runs on (the kernel hangs it up: SIGHUP); its exit status."""
    os.close(fd)
    deadline = time.monotonic() + 60
    while not (ended := os.waitpid(pid, os.WNOHANG))[0]:
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("neta did not end when its terminal closed")
        time.sleep(0.05)
    return os.waitstatus_to_exitcode(ended[1])


def conversations() -> list[Conversation]:
    stored = Conversations()
    try:
        return stored.recent()
    finally:
        stored.close()


def only_conversation() -> Conversation:
    [row] = conversations()
    return row


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_closing_the_terminal_during_a_chat_turn_stores_it_and_exits_129(tmp_path):
    term = Terminal(tmp_path, [{"text": "too late", "delay": 60}])
    term.expect("you>")
    term.type("hello\r")
    deadline = time.monotonic() + 60
    while not conversations():  # the turn began: the conversation is stored
        assert time.monotonic() < deadline, "the turn never began"
        time.sleep(0.05)
    assert close_terminal(term.pid, term.fd) == 129
    assert only_conversation().outcome == "cancelled"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_closing_the_terminal_of_a_chat_waiting_at_its_prompt_exits_129(tmp_path):
    term = Terminal(tmp_path, [{"text": "Answered."}])
    term.expect("you>")
    term.type("hello\r")
    term.expect("Answered.")
    term.expect("you>")
    assert close_terminal(term.pid, term.fd) == 129
    assert only_conversation().outcome == "completed"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_closing_the_terminal_of_neta_run_ends_its_command_and_exits_129(tmp_path):
    started = tmp_path / "started"
    tag = f"7.{secrets.randbelow(10**6):06d}"
    command = f"touch {started} && sleep {tag}"
    with FakeOpenAI([Reply(tool_calls=[("bash", json.dumps({"command": command}))])]) as server:
        argv = [
            sys.executable, "-m", "neta", "run", "go", *model_flags(server),
            "-w", str(tmp_path), "--mode", "auto", "--sandbox", "off",
        ]  # fmt: skip
        pid, fd = pty.fork()
        if pid == 0:  # the child: neta run, with the terminal as its controlling tty
            os.execve(sys.executable, argv, neta_environ(OPENAI_API_KEY="k", TERM="xterm"))
        deadline = time.monotonic() + 60
        while not started.exists():
            assert time.monotonic() < deadline, "the command never started"
            if select.select([fd], [], [], 0.05)[0]:
                os.read(fd, 4096)  # what it prints, so that it never waits on a full terminal
        assert close_terminal(pid, fd) == 129
        assert wait_none_running_with(tag, 10) == [], "the run's command outlived it"
        row = only_conversation()
        assert row.outcome == "cancelled"
        assert server.rejected == []
