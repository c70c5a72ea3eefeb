"""``neta prompt``: print the system prompt a session would get."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import typer

from neta.cli.context import cli_agent, plugin_manager
from neta.cli.options import AgentOptions, DenyOpt, OnlyOpt, ToolsetOpt, WorkspaceOpt
from neta.crew import CREW_PARENT
from neta.session import EntryKind
from neta.terminal_text import sanitize


def prompt(
    ctx: typer.Context,
    toolset: list[str] = ToolsetOpt,
    deny: list[str] = DenyOpt,
    only: list[str] = OnlyOpt,
    entry: str = typer.Option("cli", "--entry", help="cli, gateway, service or crew."),
    workspace: Path | None = WorkspaceOpt,
) -> None:
    """Print the system prompt for a session started from --entry with these toolsets.

    --entry crew shows a sub-agent's prompt: no user channel, no further delegation.
    """
    kinds: dict[str, EntryKind] = {kind: kind for kind in get_args(EntryKind)}
    if entry not in kinds:
        raise typer.BadParameter(f"--entry must be one of {', '.join(kinds)}")
    options = AgentOptions.from_flags(workspace=workspace, toolset=toolset, deny=deny, only=only)
    agent = cli_agent(plugin_manager(ctx), options, entry=kinds[entry])
    if entry == "crew":
        # a crew child: one level down, with a parent to escalate to
        session = agent.new_session(depth=1, extras={CREW_PARENT: "parent"})
    else:
        session = agent.new_session()
    try:
        # it holds what plugins, the workspace and the model's memories wrote
        typer.echo(sanitize(agent.system_prompt(session)), nl=False)
    finally:
        agent.end_session(session)
