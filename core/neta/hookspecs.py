"""The hooks a Neta plugin may implement, grouped by lifecycle.

A plugin is any module or object whose functions carry the ``@neta.hookimpl`` marker. It is
found through an entry point in group ``neta`` (the entry-point name is the toolset name) or
registered by a host with ``pm.register``. Hooks are always called with keyword arguments, so an
implementation may accept fewer arguments than its spec.

Every hook may also ask for ``host`` (a ``HostSettings``: the workspace and host options the
plugin manager serves); the manager passes it to the implementations that name it. A plugin
whose tools depend on the project's configuration reads it from there.

Every ``collect`` hook is called once per plugin; core validates what each plugin returns and
names the plugin when the value is malformed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from neta.catalog import ToolSchema
    from neta.host_settings import HostSettings
    from neta.providers.base import ProviderSpec
    from neta.session import SessionContext
    from neta.tools import Tool
    from neta.toolsets import ToolsetSpec

PROJECT_NAME = "neta"
"""The pluggy project name: markers and the manager use it."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
"""Marks a hook specification (used in this module only)."""
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a plugin's hook implementation: ``@neta.hookimpl``."""


# -- start-up: what a plugin offers -------------------------------------------------------------


@hookspec
def neta_toolsets(host: HostSettings) -> Sequence[ToolsetSpec]:
    """Announce the toolsets this plugin provides.

    Called once when a catalog is built (again when the host's workspace or options change).
    Results of all plugins are concatenated; a toolset name announced twice is reported as a
    plugin error and the first one is kept.

    Args:
        host: the workspace and host options, for toolsets that depend on configuration.

    Returns:
        The plugin's ``ToolsetSpec`` objects (name, description, whether on by default, which
        session capability it requires, why it is unavailable if it is).
    """


@hookspec
def neta_tools(host: HostSettings) -> Sequence[ToolSchema]:
    """Register tool schemas into the catalog.

    Called once when a catalog is built. Schemas only: no session exists yet. Results are
    concatenated; a tool name registered by two plugins raises ``ToolConflictError`` (unless
    the later one has a free ``qualified_name``, which it then gets).

    Args:
        host: the workspace and host options, for tools that depend on configuration.

    Returns:
        The plugin's ``ToolSchema`` objects (name, toolset, description, arguments as a
        pydantic model or a JSON Schema, prompt guidance, the one-line "when to use" scenario).
    """


@hookspec
def neta_providers() -> Sequence[ProviderSpec]:
    """Register model providers (name and factory).

    Called when a provider is looked up by name. Results are concatenated; a name registered
    twice is reported as a plugin error and the first one is kept.
    """


@hookspec
def neta_commands(app: Any) -> None:
    """Add sub-commands to the ``neta`` command line.

    Called once by the CLI before it parses arguments; every implementation is called.

    Args:
        app: the root ``typer.Typer`` application; add commands or sub-apps to it.
    """


# -- per session: building tool instances -------------------------------------------------------


@hookspec
def neta_build_tools(session: SessionContext, host: HostSettings) -> Sequence[Tool]:
    """Build this plugin's tool instances for one session.

    Called every time a session's tools are built. Tools are closures over ``session`` (its
    todo store, clarify callback, crew runner, memory store). Results are matched by name with
    the catalog's schemas: every instance needs a schema and every enabled schema an instance.
    A plugin may return instances for all of its tools; core keeps those of enabled toolsets.

    Args:
        session: the session the tools will serve.
        host: the workspace and host options the plugin manager serves.
    """


@hookspec
def neta_session_start(session: SessionContext, host: HostSettings) -> None:
    """Notify that a session starts; every implementation is called.

    Called after the session's context is created and before its toolsets are resolved and
    its tools built, so a plugin may equip a capability here (for example set
    ``session.memory_store`` or an ``extras`` entry) that its toolset requires.

    Args:
        session: the session that starts.
        host: the workspace and host options the plugin manager serves.
    """


@hookspec
def neta_session_end(session: SessionContext, host: HostSettings) -> None:
    """Notify that a session ends (flush, close, clean up); every implementation is called.

    Args:
        session: the session that ends.
        host: the workspace and host options the plugin manager serves.
    """
