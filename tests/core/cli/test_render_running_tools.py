"""While a tool runs, a terminal shows for how long, and what ``bash`` writes as it comes."""

import io
import json
import os
import pty
import sys

import pytest
from rich.console import Console

from neta.cli.render import EventRenderer
from neta.events import PermissionDecided, RunStarted, ToolCallStart, ToolOutput, ToolResultEvent
from tests.core.cli.test_chat_pty import ANSI, Terminal


class RunTerminal(Terminal):
    """``neta ARGS`` started on a pseudo-terminal (stdin, stdout and stderr), ``env`` added."""

    def __init__(self, *args, **env_extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "NETA_"))}
        env.update(NETA_HOME=os.environ["NETA_HOME"], TERM="xterm", COLUMNS="120", **env_extra)
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: neta, with the terminal as its controlling tty
            os.execve(sys.executable, [sys.executable, "-m", "neta", *args], env)
        self.seen = ""
        self.at = 0


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def renderer(terminal=True, **options):
    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=100, highlight=False)
    return EventRenderer(console, **options), out


def plain(out):
    """What the terminal shows, colours and line clearing left out."""
    return ANSI.sub("", out.getvalue())


def start_bash(render, call_id="a"):
    render(RunStarted(message="go", tools=["bash"]))
    render(ToolCallStart(call_id=call_id, name="bash", arguments='{"command": "make"}'))


def allowed(call_id="a"):
    return PermissionDecided(call_id=call_id, name="bash", action="allow", decided_by="mode")


def test_a_running_tool_shows_how_long_it_has_run_from_when_it_was_allowed():
    clock = Clock()
    render, out = renderer(clock=clock)
    start_bash(render)
    clock.now += 30  # waiting for the user's approval: not running yet
    render.tick()
    assert "running" not in out.getvalue()
    render(allowed())
    clock.now += 0.2
    render.tick()
    assert "running" not in out.getvalue()  # no flicker for a quick call
    clock.now += 11.8
    render.tick()
    assert out.getvalue().endswith("⠋ running bash (12 s)…")
    render(ToolResultEvent(call_id="a", name="bash", content="ok\n[exit code 0]"))
    assert out.getvalue().split("(12 s)…")[1].startswith("\r\x1b[2K")  # the next event clears it
    assert plain(out).endswith("✓ ok\n  [exit code 0]\n")


def test_no_timer_is_drawn_while_a_question_waits_for_an_answer():
    clock = Clock()
    asking = [True]
    render, out = renderer(clock=clock, asking=lambda: asking[0])
    start_bash(render)
    render(allowed())
    clock.now += 5
    render.tick()
    assert "running" not in out.getvalue()
    asking[0] = False
    render.tick()
    assert out.getvalue().endswith("running bash (5 s)…")


def test_what_bash_writes_shows_as_it_comes_and_its_result_only_adds_what_is_new():
    render, out = renderer()
    start_bash(render)
    render(ToolOutput(name="bash", text="compiling a\ncompil"))
    assert plain(out).endswith("\n  compiling a\n")  # a line not ended yet waits for its end
    render(ToolOutput(name="bash", text="ing b\n"))
    assert plain(out).endswith("\n  compiling a\n  compiling b\n")
    render(ToolResultEvent(call_id="a", name="bash", content="compiling a\ncompiling b\n[exit 0]"))
    shown = plain(out)
    assert shown.count("compiling a") == 1
    assert shown.rstrip().endswith("✓ [exit 0]")


def test_streamed_output_is_not_shown_off_a_terminal_where_the_result_tells_it():
    render, out = renderer(terminal=False)
    start_bash(render)
    render(ToolOutput(name="bash", text="compiling a\n"))
    assert "compiling" not in out.getvalue()
    render(ToolResultEvent(call_id="a", name="bash", content="compiling a\n[exit code 0]"))
    assert "✓ compiling a\n  [exit code 0]" in out.getvalue()


def test_a_sub_agent_s_output_is_not_streamed_into_its_parent_s_lines():
    render, out = renderer()
    start_bash(render)
    render(ToolOutput(name="bash", text="child line\n", agent_id="child123"))
    assert "child line" not in out.getvalue()


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_neta_run_at_a_terminal_shows_bash_output_and_the_time_while_it_runs(tmp_path):
    # the command goes on only once the test saw its first line on the screen
    # (printf: the lines it writes are not in the command line shown with the call)
    command = "printf 'first-%s\\n' line; while [ ! -e go ]; do sleep 0.05; done; echo last-\\line"
    call = {"name": "bash", "arguments": {"command": command, "timeout": 60}}
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"tool_calls": [call]}, {"text": "All done."}]}))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    term = RunTerminal(
        "run", "build it", "--script", str(script), "-w", str(workspace),
        "--mode", "auto", "--sandbox", "off",
    )  # fmt: skip
    term.expect("first-line", timeout=30)
    term.expect("running bash (", timeout=30)
    (workspace / "go").touch()
    term.expect("last-line")
    screen = term.expect("All done.")
    assert screen.count("\n  first-line") == 1  # the result does not show it again
    assert term.wait() == 0
