"""``neta providers``: the model providers installed, where they come from, what they read."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape

from neta.cli.context import echo_json, plugin_manager
from neta.cli.tables import folding_table
from neta.providers.registry import provider_entries


def providers(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the model providers: name, where it comes from, the environment variables it reads."""
    entries = provider_entries(plugin_manager(ctx))
    if as_json:
        echo_json(
            [
                {
                    "name": e.spec.name,
                    "description": e.spec.description,
                    "source": e.source,
                    "plugin": e.plugin.name if e.plugin else None,
                    "distribution": e.plugin.distribution if e.plugin else "neta",
                    "env_vars": list(e.spec.env_vars),
                    "install": e.spec.install,
                }
                for e in entries
            ]
        )
        return
    table = folding_table("provider", "from", "environment", "install", "description")
    rows = [
        [
            e.spec.name,
            e.source,
            "\n".join(e.spec.env_vars) or "-",
            e.spec.install or "-",
            e.spec.description,
        ]
        for e in entries
    ]
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    Console(highlight=False).print(table)
