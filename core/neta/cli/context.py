"""Helpers every command shares: the plugin manager from the context, JSON output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from neta.plugins import NetaPluginManager
from neta.session import SessionContext


def plugin_manager(ctx: typer.Context) -> NetaPluginManager:
    """The plugin manager ``main`` created for this invocation."""
    pm: NetaPluginManager = ctx.find_root().obj.pm
    return pm


def echo_json(value: Any) -> None:
    """Print ``value`` as indented JSON on standard output."""
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False))


def cli_session(workspace: Path | None) -> SessionContext:
    """A session for commands run at the terminal, rooted at ``workspace`` (default: cwd)."""
    return SessionContext(workspace=workspace or Path.cwd(), entry="cli")
