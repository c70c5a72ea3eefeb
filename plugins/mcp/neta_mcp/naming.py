"""Toolset and tool names for an MCP server's tools, within what Neta's names allow."""

from __future__ import annotations

import re

TOOLSET_PREFIX = "mcp-"
"""Server ``NAME`` is toolset ``mcp-NAME`` (a toolset name allows no ``:``)."""

_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]+")
_LIMIT = 64


def toolset_name(server: str) -> str:
    """The toolset of server ``server``: ``mcp-`` and the server name made safe."""
    return (TOOLSET_PREFIX + _safe(server))[:_LIMIT]


def tool_name(tool: str) -> str:
    """A server's tool name as a Neta tool name (disallowed characters become ``_``)."""
    return _safe(tool)[:_LIMIT]


def qualified_tool_name(server: str, tool: str) -> str:
    """The name used when ``tool``'s own is taken: ``SERVER_TOOL``."""
    return f"{_safe(server)}_{_safe(tool)}"[:_LIMIT]


def _safe(name: str) -> str:
    return _NOT_ALLOWED.sub("_", name).strip("_") or "x"
