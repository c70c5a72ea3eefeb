"""``neta toolsets``: each toolset, whether a session gets it, and why."""

from __future__ import annotations

import typer
from rich.console import Console

from neta.cli.context import cli_session, echo_json, plugin_manager
from neta.cli.options import AgentOptions
from neta.cli.sanitize import sanitize_markup
from neta.cli.tables import folding_table


def toolsets(
    ctx: typer.Context,
    toolset: list[str] = typer.Option([], "--toolset", "-t", help="Request a toolset."),
    deny: list[str] = typer.Option([], "--deny", help="Deny a toolset."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show every toolset, on or off for a terminal session, and the reason."""
    pm = plugin_manager(ctx)
    with cli_session(pm, AgentOptions.from_flags(toolset=toolset, deny=deny)) as session:
        resolution = session.toolsets
    catalog = pm.catalog()
    specs = {spec.name: spec for spec in pm.toolset_specs()}
    rows = [
        {
            "name": d.name,
            "enabled": d.enabled,
            "reason": d.reason,
            "description": specs[d.name].description,
            "tools": catalog.tool_names([d.name]),
        }
        for d in resolution.decisions
    ]
    if as_json:
        echo_json(rows)
        return
    table = folding_table("toolset", "state", "why", "tools")
    for d in resolution.decisions:
        state = "[green]on[/]" if d.enabled else "[dim]off[/]"
        tools = ", ".join(catalog.tool_names([d.name])) or "-"
        table.add_row(
            sanitize_markup(d.name), state, sanitize_markup(d.reason), sanitize_markup(tools)
        )
    Console().print(table if rows else "No toolsets: no plugin announces any.")
