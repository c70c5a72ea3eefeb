"""``neta mcp list``: the configured servers, whether a session gets them, and their tools."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from neta import Agent, HostSettings, sanitize
from neta_mcp.host import asking_servers
from neta_mcp.naming import toolset_name


def add_commands(app: typer.Typer, states: Callable[[HostSettings], Any]) -> None:
    """Add ``list`` to the ``neta mcp`` group (creating the group if the CLI has none)."""
    group = next(
        (g.typer_instance for g in app.registered_groups if g.name == "mcp" and g.typer_instance),
        None,
    )
    if group is None:
        group = typer.Typer(help="MCP servers: list them.", no_args_is_help=True)
        app.add_typer(group, name="mcp")

    @group.command("list")
    def list_servers(
        ctx: typer.Context,
        workspace: Path | None = typer.Option(None, "--workspace", "-w", help="Workspace root."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """List the configured MCP servers: where from, on or off and why, how many tools.

        Each server a session may get is started and asked for its tools (what other commands
        take from the cache), so the list says how the servers are now; the cache is refreshed.
        """
        pm = ctx.find_root().obj.pm
        with asking_servers():
            agent = Agent(provider=None, plugin_manager=pm, workspace=workspace or Path.cwd())
            session = agent.new_session()
            agent.end_session(session)
        state = states(pm.host)
        rows = []
        for name, server in state.servers.items():
            toolset = toolset_name(name)
            decision = session.toolsets.decision(toolset)
            rows.append(
                {
                    "name": name,
                    "toolset": toolset,
                    "transport": server.config.transport if server.config else "-",
                    "target": server.config.summary() if server.config else "-",
                    "source": server.source,
                    "enabled": decision.enabled,
                    "reason": decision.reason,
                    "tools": len(pm.catalog().tool_names([toolset])),
                }
            )
        if as_json:
            typer.echo(json.dumps(rows, indent=2))
        elif rows:
            _print_table(rows)
        elif not state.problems:
            typer.echo("No MCP servers configured (mcp.json in NETA_HOME or .neta/).")
        for problem in state.problems:  # the servers of the other files are listed above
            typer.echo(f"Error: {sanitize(problem)}", err=True)
        if state.problems:
            raise typer.Exit(1)


def _print_table(rows: list[dict[str, Any]]) -> None:
    """The servers as a table: name, toolset, where it runs, on or off and why, tools."""
    table = Table("server", "toolset", "transport", "state", "why", "tools", box=None)
    for row in rows:
        state_text = "[green]on[/]" if row["enabled"] else "[dim]off[/]"
        name, toolset, target, reason = (
            escape(sanitize(text))  # a server's output reaches the reason
            for text in (
                row["name"], row["toolset"], f"{row['transport']}: {row['target']}",
                row["reason"],
            )
        )  # fmt: skip
        table.add_row(name, toolset, target, state_text, reason, str(row["tools"]))
    Console().print(table)
