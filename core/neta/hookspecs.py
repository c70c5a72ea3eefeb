"""The hooks a Neta plugin may implement, grouped by lifecycle.

A plugin is any module or object whose functions carry the ``@neta.hookimpl`` marker. It is
found through an entry point in group ``neta`` (the entry-point name is the toolset name) or
registered by a host with ``pm.register``. Hooks are always called with keyword arguments, so an
implementation may accept fewer arguments than its spec.

**Call order.** Neta calls each plugin's implementation separately (so it can check what each
one returns and name the plugin when it is malformed), in exactly the order pluggy's
``pm.hook.<name>()`` uses: implementations marked ``tryfirst=True`` first, then plain ones,
then those marked ``trylast=True``; within each group, the plugin registered last is called
first. Built-in plugins are registered before third-party ones, and hosts' own plugins
(``create_plugin_manager(plugins=...)``) before any entry point.

**First one kept.** Where two plugins offer the same name (a toolset, a tool, a provider), the
implementation called first keeps it and the other's entry is reported as a plugin problem and
left out. So a plugin overrides another's toolset by marking its hook ``tryfirst=True``, and
offers a fallback by marking it ``trylast=True``.

**No wrappers.** A hook implemented with ``wrapper=True`` or ``hookwrapper=True`` has no single
call to wrap here; ``register`` refuses such a plugin with a ``PluginError`` naming it.

Every ``collect`` hook is called once per plugin and its results are concatenated in call
order; every ``notify`` hook is called on every plugin, and one that raises is reported while
the others still run.

Every hook may also ask for ``host`` (a ``HostSettings``: the workspace and host options the
plugin manager serves); the manager passes it to the implementations that name it. A plugin
whose tools depend on the project's configuration reads it from there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    import typer

    from neta.catalog import ToolSchema
    from neta.host_settings import HostSettings
    from neta.providers.base import ProviderSpec
    from neta.session import SessionContext
    from neta.tools import Tool
    from neta.toolsets import ToolsetSpec

PROJECT_NAME = "neta"
"""The pluggy project name: markers and the manager use it."""

_hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a plugin's hook implementation: ``@neta.hookimpl`` (``tryfirst``/``trylast`` apply)."""


# -- start-up: what a plugin offers -------------------------------------------------------------


@_hookspec
def neta_toolsets(host: HostSettings) -> Sequence[ToolsetSpec]:
    """Announce the toolsets this plugin provides (collect).

    Called once when a catalog is built (again when the host's workspace or options change).
    Results of all plugins are concatenated in call order; a toolset name announced twice is
    reported as a plugin error and the first one is kept.

    Args:
        host: the workspace and host options, for toolsets that depend on configuration.

    Returns:
        The plugin's ``ToolsetSpec`` objects (name, description, whether on by default, which
        session capability it requires, why it is unavailable if it is).
    """


@_hookspec
def neta_tools(host: HostSettings) -> Sequence[ToolSchema]:
    """Register tool schemas into the catalog (collect).

    Called once when a catalog is built. Schemas only: no session exists yet. Results are
    concatenated in call order; a tool name registered by two plugins is reported as a
    ``ToolConflictError`` naming both, and the first one is kept (unless the later one has a
    free ``qualified_name``, which it then gets). A schema whose toolset no plugin announced
    is reported and left out.

    Args:
        host: the workspace and host options, for tools that depend on configuration.

    Returns:
        The plugin's ``ToolSchema`` objects (name, toolset, description, arguments as a
        pydantic model or a JSON Schema, prompt guidance, the one-line "when to use" scenario).
    """


@_hookspec
def neta_providers() -> Sequence[ProviderSpec]:
    """Register model providers (collect).

    Called when a provider is looked up by name. Results are concatenated in call order; a
    name registered twice (or one of the built-in providers' names) is reported as a plugin
    error and the first one is kept.

    Returns:
        The plugin's ``ProviderSpec`` objects (name, description, factory).
    """


@_hookspec
def neta_commands(app: typer.Typer) -> None:
    """Add sub-commands to the ``neta`` command line (notify).

    Called once by the CLI before it parses arguments; every implementation is called.

    Args:
        app: the root ``typer.Typer`` application; add commands or sub-apps to it.

    Returns:
        Nothing; what an implementation returns is ignored.
    """


# -- per session: building tool instances -------------------------------------------------------


@_hookspec
def neta_build_tools(session: SessionContext, host: HostSettings) -> Sequence[Tool]:
    """Build this plugin's tool instances for one session (collect).

    Called every time a session's tools are built. Tools are closures over ``session`` (its
    todo store, clarify callback, crew runner, memory store). Results are matched by name with
    the catalog's schemas: every instance needs a schema and every enabled schema an instance.
    A plugin may return instances for all of its tools; core keeps those of enabled toolsets.

    Args:
        session: the session the tools will serve.
        host: the workspace and host options the plugin manager serves.

    Returns:
        The plugin's ``Tool`` instances for ``session``.
    """


@_hookspec
def neta_session_start(session: SessionContext, host: HostSettings) -> None:
    """Notify that a session starts; every implementation is called (notify).

    Called after the session's context is created and before its toolsets are resolved and
    its tools built, so a plugin may equip a capability here (for example set
    ``session.memory_store`` or an ``extras`` entry) that its toolset requires.

    Args:
        session: the session that starts; implementations may set its capabilities.
        host: the workspace and host options the plugin manager serves.

    Returns:
        Nothing; what an implementation returns is ignored.
    """


@_hookspec
def neta_session_end(session: SessionContext, host: HostSettings) -> None:
    """Notify that a session ends (flush, close, clean up); every implementation is called.

    Called once per session started, also when building its tools failed.

    Args:
        session: the session that ended.
        host: the workspace and host options the plugin manager serves.

    Returns:
        Nothing; what an implementation returns is ignored.
    """


@_hookspec
def neta_run_end(session: SessionContext, outcome: str) -> None:
    """Notify that a run of the session ended; every implementation is called.

    Called by ``Agent.run`` however the run ended, before it returns or re-raises, so a
    plugin can stop what the run started (the ``base`` plugin kills the processes of a
    cancelled run).

    Args:
        session: the session the run belonged to.
        outcome: ``completed``, ``awaiting_input``, ``max_turns``, ``limit``, ``cancelled``
            or ``error``.

    Returns:
        Nothing; what an implementation returns is ignored.
    """
