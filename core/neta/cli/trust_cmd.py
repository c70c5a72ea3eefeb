"""``neta trust`` and ``neta untrust``: which workspaces' own configuration is used."""

from __future__ import annotations

from pathlib import Path

import typer

from neta.cli.context import echo_json
from neta.cli.trust_notice import describe
from neta.errors import ConfigError
from neta.terminal_text import sanitize
from neta.trust import TrustStore


def trust(
    path: Path = typer.Argument(
        None, help="The workspace (default: the current directory).", show_default=False
    ),
    list_: bool = typer.Option(False, "--list", help="List the trusted workspaces."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (with --list)."),
) -> None:
    """Trust a workspace: its .neta/mcp.json and .neta/skills are used from now on.

    A later change to those files makes it untrusted again until you trust it once more.
    """
    store = TrustStore()
    if list_:
        records = store.records()
        if as_json:
            echo_json([vars(record) for record in records.values()])
            return
        for record in records.values():
            current = Path(record.path)
            state = "trusted" if store.is_trusted(current) else "changed since: not trusted"
            typer.echo(f"{sanitize(record.path)}  ({state}, {sanitize(record.trusted_at)})")
        if not records:
            typer.echo("No trusted workspaces.")
        return
    workspace = _workspace(path)
    for line in describe(workspace):
        typer.echo(sanitize(line))
    store.trust(workspace)
    typer.echo(f"Trusted {sanitize(str(workspace))}.")


def untrust(
    path: Path = typer.Argument(
        None, help="The workspace (default: the current directory).", show_default=False
    ),
) -> None:
    """Stop trusting a workspace: its .neta/mcp.json and .neta/skills are ignored again."""
    workspace = _workspace(path)
    if TrustStore().untrust(workspace):
        typer.echo(f"{sanitize(str(workspace))} is no longer trusted.")
    else:
        typer.echo(f"{sanitize(str(workspace))} was not trusted.")


def _workspace(path: Path | None) -> Path:
    workspace = (path or Path.cwd()).resolve()
    if not workspace.is_dir():
        raise ConfigError(f"{str(workspace)!r} is not a directory")
    return workspace
