"""Helpers every command shares: the plugin manager from the context, JSON output."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from neta.cli.options import AgentOptions
from neta.cli.trust_notice import settle_trust
from neta.errors import ConfigError
from neta.plugins import NetaPluginManager
from neta.providers.base import ModelRequest, ModelResponse, TextSink
from neta.runtime.agent import Agent, AgentSession
from neta.session import ClarifyFn, EntryKind
from neta.terminal_text import json_escaped


def plugin_manager(ctx: typer.Context) -> NetaPluginManager:
    """The plugin manager ``main`` created for this invocation."""
    pm: NetaPluginManager = ctx.find_root().obj.pm
    return pm


def report_problems(ctx: typer.Context) -> None:
    """Show the plugin problems met so far now, rather than when the command ends.

    For long-running commands (``chat``, ``run``): a broken plugin is worth knowing about
    before the conversation starts. Each problem is still shown once.
    """
    ctx.find_root().obj.report_problems()


def echo_json(value: Any) -> None:
    """Print ``value`` as indented JSON on standard output.

    Non-ASCII text is written as is when standard output can encode it, escaped otherwise,
    so the JSON stays valid and lossless on any terminal. Control and bidirectional
    characters are always escaped (``json_escaped``): a terminal never obeys them. A value
    JSON has no type for (a path, a date in a tool's ``data``) is written as its text.
    """
    text = json_escaped(json.dumps(value, indent=2, ensure_ascii=False, default=str))
    if not _encodable(text):
        text = json.dumps(value, indent=2, default=str)
    typer.echo(text)


def _encodable(text: str) -> bool:
    try:
        text.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def cli_agent(pm: NetaPluginManager, options: AgentOptions, *, entry: EntryKind = "cli") -> Agent:
    """An agent without a model, for the commands that inspect or call tools by hand.

    Of ``options`` only the workspace and the toolsets count. Its sessions start exactly as
    ``neta run``'s do: plugins equip them, toolsets resolve. A workspace whose own
    configuration is not trusted is used without it, as one line says.
    """
    settle_trust(options.workspace or Path.cwd(), ask=False)
    return Agent(
        provider=_NoModel(), plugin_manager=pm, entry=entry, **options.workspace_and_toolsets()
    )


class _NoModel:
    """The model of the commands that call tools by hand: there is none.

    A tool that asks for one (a sub-agent's run) is told so, in a command line user's words.
    """

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        raise ConfigError(
            "`neta tools call` runs a tool without a model; one that needs a model "
            "(a sub-agent) runs in `neta run` or `neta chat`"
        )


@contextlib.contextmanager
def cli_session(
    pm: NetaPluginManager, options: AgentOptions, *, clarify: ClarifyFn | None = None
) -> Iterator[AgentSession]:
    """A new session of ``cli_agent(pm, options)``, ended (plugins told) on exit.

    ``clarify``: how the session asks the user (none: clarify degrades).
    """
    agent = cli_agent(pm, options)
    session = agent.new_session(clarify=clarify)
    try:
        yield session
    finally:
        agent.end_session(session)
