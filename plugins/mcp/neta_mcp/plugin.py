"""The ``mcp`` plugin's hook implementations: each configured MCP server is a toolset."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import neta
from neta import HostSettings, SessionContext, Tool, ToolSchema, ToolsetSpec
from neta_mcp.host import McpHost

_HOSTS: weakref.WeakKeyDictionary[HostSettings, McpHost] = weakref.WeakKeyDictionary()


def mcp_host(host: HostSettings) -> McpHost:
    """The MCP servers of ``host`` (created on first use; closed when ``host`` goes away)."""
    found = _HOSTS.get(host)
    if found is None:
        found = McpHost(host.workspace, dict(host.options))
        _HOSTS[host] = found
        weakref.finalize(host, found.close)
    return found


@neta.hookimpl
def neta_toolsets(host: HostSettings) -> Sequence[ToolsetSpec]:
    """One toolset per configured server; a broken ``mcp.json`` is one more, off, saying why."""
    return mcp_host(host).toolset_specs()


@neta.hookimpl
def neta_tools(host: HostSettings) -> Sequence[ToolSchema]:
    """The tools the running servers listed."""
    return mcp_host(host).tool_schemas()


@neta.hookimpl
def neta_build_tools(session: SessionContext, host: HostSettings) -> Sequence[Tool]:
    """Tools that call the servers through this session's connections."""
    return mcp_host(host).build_tools(session)


@neta.hookimpl
def neta_session_end(session: SessionContext, host: HostSettings) -> None:
    """Close the session's server connections."""
    mcp_host(host).end_session(session)


@neta.hookimpl
def neta_commands(app: Any) -> None:
    """Add ``neta mcp list``."""
    # Here, not at the top: the command line's typer and rich load only for a command line,
    # not in every host (or server worker) that loads the plugins.
    from neta_mcp.commands import add_commands

    add_commands(app, mcp_host)
