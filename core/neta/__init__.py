"""Neta: a framework for tool-using LLM agents whose tools come from plugins.

Plugins and hosts import from this module only.
"""

from neta.catalog import Catalog, ToolSchema
from neta.errors import (
    AmbiguousMatchError,
    ConfigError,
    InvalidEditError,
    MatchError,
    NetaError,
    NoMatchError,
    PluginError,
    ProviderError,
    ToolConflictError,
    ToolError,
    ToolRetry,
)
from neta.hookspecs import hookimpl, hookspec
from neta.plugins import NetaPluginManager, PluginInfo, create_plugin_manager
from neta.providers.base import ProviderSpec
from neta.session import ClarifyFn, EntryKind, EventSink, SessionContext
from neta.session_tools import BoundTool, build_session_tools, resolve_session_toolsets
from neta.tools import Tool, ToolCall, ToolResult
from neta.toolsets import (
    TOOLSET_DEFAULTS,
    ToolsetDecision,
    ToolsetResolution,
    ToolsetSpec,
    resolve_toolsets,
)

__version__ = "0.1.0"

__all__ = [
    "TOOLSET_DEFAULTS",
    "AmbiguousMatchError",
    "BoundTool",
    "Catalog",
    "ClarifyFn",
    "ConfigError",
    "EntryKind",
    "EventSink",
    "InvalidEditError",
    "MatchError",
    "NetaError",
    "NetaPluginManager",
    "NoMatchError",
    "PluginError",
    "PluginInfo",
    "ProviderError",
    "ProviderSpec",
    "SessionContext",
    "Tool",
    "ToolCall",
    "ToolConflictError",
    "ToolError",
    "ToolResult",
    "ToolRetry",
    "ToolSchema",
    "ToolsetDecision",
    "ToolsetResolution",
    "ToolsetSpec",
    "build_session_tools",
    "create_plugin_manager",
    "hookimpl",
    "hookspec",
    "resolve_session_toolsets",
    "resolve_toolsets",
]
