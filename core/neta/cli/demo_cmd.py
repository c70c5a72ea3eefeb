"""``neta demo``: the whole system at work, offline, in a fresh temporary workspace.

A scripted model plans with ``todo``, reads a file, fixes it with a ``patch`` whose
``old_string`` is indented differently from the file (so a fuzzy strategy has to find it), runs
the code with ``bash`` and reports. Nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from neta.cli.context import plugin_manager
from neta.cli.render import EventRenderer
from neta.cli.sanitize import sanitize_markup
from neta.errors import ConfigError
from neta.events import ToolResultEvent
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent, RunResult
from neta.sandbox import sandbox_unavailable

GREETING = '''"""Greets people."""


def greet(name):
    if not name:
        return "Hello, stranger!"
    return "Hello, " + name
'''
"""The file the demo fixes: its greeting lacks an exclamation mark."""

# The model's copy of the function uses two-space indentation; the file uses four.
OLD = 'def greet(name):\n  if not name:\n      return "Hello, stranger!"\n  return "Hello, " + name'
"""The scripted model's copy of the function, indented differently from the file."""
NEW = (
    'def greet(name):\n  if not name:\n      return "Hello, stranger!"\n  return f"Hello, {name}!"'
)
"""The same function with the fix, in the model's indentation."""


def _plan(*statuses: str) -> dict[str, Any]:
    steps = ["Read app/greeting.py", "Add the missing exclamation mark", "Run it to check"]
    todos = [
        {"id": str(n), "content": text, "status": status}
        for n, (text, status) in enumerate(zip(steps, statuses, strict=True), start=1)
    ]
    return {"name": "todo", "arguments": {"todos": todos}}


def demo_script() -> list[dict[str, Any]]:
    """The scripted model's turns."""
    program = "from greeting import greet; print(greet('Ada'))"
    check = f'cd app && {shlex.quote(sys.executable)} -c "{program}"'
    return [
        {
            "text": "I'll plan this first.",
            "tool_calls": [_plan("in_progress", "pending", "pending")],
        },
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "app/greeting.py"}}]},
        {
            "text": "The greeting lacks its exclamation mark; patching it.",
            "tool_calls": [
                _plan("completed", "in_progress", "pending"),
                {
                    "name": "patch",
                    "arguments": {"path": "app/greeting.py", "old_string": OLD, "new_string": NEW},
                },
            ],
        },
        {
            "tool_calls": [
                _plan("completed", "completed", "in_progress"),
                {"name": "bash", "arguments": {"command": check}},
            ]
        },
        {"tool_calls": [_plan("completed", "completed", "completed")]},
        {"text": "Done: greet('Ada') now returns \"Hello, Ada!\", with its exclamation mark."},
    ]


def demo(
    ctx: typer.Context,
    keep: bool = typer.Option(False, "--keep", help="Keep the temporary workspace."),
) -> None:
    """Run a scripted agent offline: plan, read, fuzzy patch, check, answer."""
    console = Console(highlight=False)
    workspace = Path(tempfile.mkdtemp(prefix="neta-demo-"))
    try:
        worked = _run_demo(ctx, workspace, console)
    finally:
        if keep:
            console.print(f"workspace kept: {workspace}")
        else:
            shutil.rmtree(workspace, ignore_errors=True)
    raise typer.Exit(0 if worked else 1)


def _run_demo(ctx: typer.Context, workspace: Path, console: Console) -> bool:
    """Run the scripted task; report it; whether the run completed and every step worked."""
    (workspace / "app").mkdir()
    (workspace / "app" / "greeting.py").write_text(GREETING)
    pm = plugin_manager(ctx)
    absent = {"base", "planning"} - {spec.name for spec in pm.toolset_specs()}
    if absent:
        raise ConfigError(
            "neta demo needs the base and planning toolsets; not installed or disabled: "
            + ", ".join(sorted(absent))
        )
    # the demo replays its own fixed script, so it may run its commands unsandboxed where
    # this machine cannot sandbox them; everything else refuses instead
    unavailable = sandbox_unavailable()
    agent = Agent(
        provider=ScriptedProvider(demo_script()),
        plugin_manager=pm,
        workspace=workspace,
        preset=["base", "planning"],
        sandbox="off" if unavailable else "on",
        permissions="auto",  # its own fixed script: nothing to ask about
    )
    session = agent.new_session()
    missing = {"todo", "read_file", "patch", "bash"} - set(session.tools)
    if missing:
        raise ConfigError(
            "neta demo needs the base and planning toolsets; missing tools: "
            + ", ".join(sorted(missing))
        )
    console.print(f"[bold]Neta demo[/] in a temporary workspace: {workspace}")
    if unavailable:
        console.print(
            "[yellow]The demo's own fixed commands run unsandboxed: bubblewrap is not "
            "available here (see neta doctor); other commands refuse to run so.[/]"
        )
    console.print()
    task = "Fix the greeting in app/greeting.py."
    try:
        result = asyncio.run(agent.run(task, session=session, on_event=EventRenderer(console)))
    finally:
        agent.end_session(session)
    return _report(result, console)


def _report(result: RunResult, console: Console) -> bool:
    # The script goes on whatever its tools return, so its last words prove nothing: a step
    # that failed (no bash on this machine, say) makes the demo fail, naming the step.
    results = [e for e in result.events if isinstance(e, ToolResultEvent)]
    failed = [e for e in results if e.is_error]
    patched = next((e for e in results if e.name == "patch" and not e.is_error), None)
    console.print()
    if patched is not None:
        console.print(
            f"patch matched with the [bold]{patched.data['strategy']}[/] strategy "
            f"(lines {patched.data['start_line']}-{patched.data['end_line']}), "
            "re-indented to the file's four spaces."
        )
    for event in failed:
        first_line = (event.content.splitlines() or [""])[0]
        console.print(
            f"[red]step failed:[/] {sanitize_markup(event.name)}: {sanitize_markup(first_line)}"
        )
    if failed:
        console.print(f"demo failed: {len(failed)} of {len(results)} tool calls did not work")
        return False
    console.print(f"outcome: {result.outcome}, {result.turns} model turns")
    return result.outcome == "completed"
