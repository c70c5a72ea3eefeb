"""``neta chat`` on a real pseudo-terminal: line editing, history, multi-line input, Ctrl-C."""

import contextlib
import json
import os
import pty
import re
import select
import signal
import sys
import time

import pytest

from tests.processes import running_with, wait_none_running_with
from tests.services import require_sandbox

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

LEFT, UP, CTRL_C, CTRL_D = "\x1b[D", "\x1b[A", "\x03", "\x04"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r")


class Terminal:
    """``neta chat`` started on a pseudo-terminal, typed at as a user would."""

    def __init__(self, tmp_path, turns, *args):
        script = tmp_path / f"script-{time.monotonic_ns()}.json"
        script.write_text(json.dumps({"turns": turns}))
        workspace = tmp_path / "ws"
        workspace.mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "NETA_"))}
        env.update(NETA_HOME=os.environ["NETA_HOME"], PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm")
        argv = [sys.executable, "-m", "neta", "chat", "--script", str(script), "-w", str(workspace)]
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: neta chat, with the terminal as its controlling tty
            os.execve(sys.executable, [*argv, *args], env)
        self.seen = ""
        self.at = 0  # where the next expect starts looking, on the screen

    def type(self, text):
        os.write(self.fd, text.encode())

    def expect(self, pattern, timeout=20.0):
        """Wait until the screen (escape codes removed) shows ``pattern`` after the last match.

        Returns the screen up to the match.
        """
        deadline = time.monotonic() + timeout
        while (found := ANSI.sub("", self.seen).find(pattern, self.at)) < 0:
            left = deadline - time.monotonic()
            assert left > 0, f"never saw {pattern!r}; saw:\n{ANSI.sub('', self.seen)}"
            if select.select([self.fd], [], [], left)[0]:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:  # the child is gone
                    chunk = b""
                if not chunk:
                    raise AssertionError(
                        f"ended before {pattern!r}; saw:\n{ANSI.sub('', self.seen)}"
                    )
                self.seen += chunk.decode(errors="replace")
        self.at = found + len(pattern)
        return ANSI.sub("", self.seen)[: self.at]

    def wait(self, timeout=20.0):
        """The exit status (after reading what is left)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if select.select([self.fd], [], [], 0.1)[0]:
                with contextlib.suppress(OSError):
                    self.seen += os.read(self.fd, 4096).decode(errors="replace")
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        raise AssertionError(f"neta chat did not end; saw:\n{ANSI.sub('', self.seen)}")


def test_chat_has_line_editing_a_one_line_banner_and_a_history_kept_in_neta_home(tmp_path):
    # two sessions, the fewest that show a history kept across them (each costs a process)
    turns = [{"text": "Hi Ada.", "expect": {"last_message_contains": "I am Ada"}}]
    first = Terminal(tmp_path, turns)
    screen = first.expect("you>")
    [banner] = [line for line in screen.splitlines() if "neta chat · " in line]
    assert "scripted · ws · toolsets: base, crew" in banner
    assert banner.endswith("/help · Ctrl-D exits")  # how to leave, whatever the width
    assert len(screen.splitlines()) == 2  # the banner is one line
    first.type("I am Aa" + LEFT + "d\r")  # ← moves the cursor: it is not sent as text
    first.expect("Hi Ada.")
    first.expect("you>")
    first.type(CTRL_D)
    assert first.wait() == 0
    turns = [{"text": "again", "expect": {"last_message_contains": "I am Ada"}}]
    second = Terminal(tmp_path, turns)
    second.expect("you>")
    second.type(UP + "\r")  # the previous session's line, from the history file
    second.expect("again")
    second.expect("you>")
    second.type("exit\r")
    assert second.wait() == 0


def test_chat_takes_multi_line_entries_and_answers_slash_commands_itself(tmp_path):
    turns = [
        {"text": "got two", "expect": {"last_message_contains": "line one\nline two"}},
        {"text": "got three", "expect": {"last_message_contains": "a\nb"}},
    ]
    term = Terminal(tmp_path, turns)
    term.expect("you>")
    term.type("line one\\\r")  # a trailing backslash goes on to the next line
    term.type("line two\r")
    term.expect("got two")
    term.expect("you>")
    term.type("a\x1b\rb\r")  # Esc-Enter starts a new line
    term.expect("got three")
    term.expect("you>")
    # the script has no turn left: a line sent to the model from here would fail the run
    term.type("/nope\r")
    term.expect("Unknown command /nope; /help lists the commands.")
    term.expect("you>")
    term.type("/help\r")
    screen = term.expect("/exit ")
    for command in ("/toolsets", "/todo", "/clear", "/session"):
        assert command in screen
    term.expect("you>")
    term.type("/toolsets\r")
    term.expect("toolsets: base")
    term.expect("you>")
    term.type("/exit\r")
    assert term.wait() == 0
    assert "scripted provider" not in ANSI.sub("", term.seen)


def test_ctrl_c_cancels_a_turn_then_a_question_and_at_an_empty_prompt_exits_130(tmp_path):
    require_sandbox()  # its bash call runs in the default sandbox
    # Ctrl-C's three meanings, in one session (each session costs a process)
    ask = {"question": "Which colour?", "choices": ["red", "blue"]}
    slow = f"sleep 30.{os.getpid()}"  # unique on the command lines of this machine
    turns = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": slow}}]},
        {"tool_calls": [{"name": "clarify", "arguments": ask}]},
        {"text": "going on without it"},
        {"text": "still here", "expect": {"last_message_contains": "are you there"}},
    ]
    term = Terminal(tmp_path, turns, "--mode", "auto")  # the command runs: nobody is asked
    term.expect("you>")
    # during a turn: the turn is cancelled (its tool killed), the conversation kept
    term.type("run something slow\r")
    term.expect("→ bash")
    deadline = time.monotonic() + 20
    while not running_with(slow):
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.05)
    term.type(CTRL_C)
    term.expect("Turn cancelled; the conversation so far is kept.")
    assert wait_none_running_with(slow) == []  # killed, not waited out
    term.expect("you>")
    # at the clarify prompt: just the question is cancelled, the run goes on
    term.type("paint it\r")
    term.expect("answer>")
    term.type(CTRL_C)
    term.expect("(question cancelled with Ctrl-C; the agent goes on)")
    term.expect("going on without it")
    term.expect("you>")
    term.type("are you there\r")
    term.expect("still here")
    term.expect("you>")
    # at the prompt: with text, Ctrl-C clears the line only; on an empty one it exits
    term.type("some text" + CTRL_C)
    term.type(CTRL_C)
    assert term.wait() == 130
