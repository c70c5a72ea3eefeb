"""``neta prompt``: print the system prompt a session would get."""

from __future__ import annotations

from pathlib import Path

import typer

from neta.cli.context import cli_agent, plugin_manager
from neta.session import EntryKind


def prompt(
    ctx: typer.Context,
    toolset: list[str] = typer.Option([], "--toolset", "-t", help="Request a toolset."),
    entry: str = typer.Option("cli", "--entry", help="cli, gateway, service or crew."),
    workspace: Path | None = typer.Option(None, "--workspace", "-w", help="Workspace root."),
) -> None:
    """Print the system prompt for a session started from ``--entry`` with these toolsets."""
    kinds: dict[str, EntryKind] = {
        "cli": "cli",
        "gateway": "gateway",
        "service": "service",
        "crew": "crew",
    }
    if entry not in kinds:
        raise typer.BadParameter(f"--entry must be one of {', '.join(kinds)}")
    agent = cli_agent(plugin_manager(ctx), workspace, entry=kinds[entry], toolsets=toolset)
    typer.echo(agent.system_prompt(agent.new_session()), nl=False)
