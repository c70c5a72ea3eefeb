"""``neta plugins``: what is installed and loaded."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape

from neta.cli.context import echo_json, plugin_manager
from neta.cli.tables import folding_table


def plugins(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the loaded plugins: name, version, hooks, built-in or third-party."""
    pm = plugin_manager(ctx)
    rows = [
        {
            "name": info.name,
            "distribution": info.distribution,
            "version": info.version,
            "builtin": info.builtin,
            "entry_point": info.entry_point,
            "hooks": pm.hook_names(info.name),
        }
        for info in pm.plugin_infos()
    ]
    if as_json:
        echo_json(rows)
        return
    table = folding_table("plugin", "version", "kind", "hooks")
    for info in pm.plugin_infos():
        kind = "built-in" if info.builtin else "third-party"
        cells = (info.name, info.version or "-", kind, ", ".join(pm.hook_names(info.name)))
        table.add_row(*(escape(cell) for cell in cells))
    Console().print(table if rows else "No plugins loaded.")
