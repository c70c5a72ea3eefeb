"""Helpers every command shares: the plugin manager from the context, JSON output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from neta.plugins import NetaPluginManager
from neta.runtime.agent import Agent, AgentSession
from neta.session import EntryKind


def plugin_manager(ctx: typer.Context) -> NetaPluginManager:
    """The plugin manager ``main`` created for this invocation."""
    pm: NetaPluginManager = ctx.find_root().obj.pm
    return pm


def echo_json(value: Any) -> None:
    """Print ``value`` as indented JSON on standard output."""
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False))


def cli_agent(
    pm: NetaPluginManager,
    workspace: Path | None,
    *,
    entry: EntryKind = "cli",
    toolsets: list[str] | None = None,
    deny: list[str] | None = None,
) -> Agent:
    """An agent without a model, for the commands that inspect or call tools by hand.

    Its sessions start exactly as ``neta run``'s do: plugins equip them, toolsets resolve.
    """
    return Agent(
        provider=None,
        plugin_manager=pm,
        workspace=workspace or Path.cwd(),
        entry=entry,
        toolsets=toolsets or (),
        deny=deny or (),
    )


def cli_session(pm: NetaPluginManager, workspace: Path | None, **options: Any) -> AgentSession:
    """A new session of ``cli_agent(pm, workspace, **options)``."""
    return cli_agent(pm, workspace, **options).new_session()
