"""Neta: a framework for tool-using LLM agents whose tools come from plugins.

Plugins and hosts import from this module only.
"""

from neta.catalog import Catalog, ToolSchema
from neta.crew import CREW_PARENT, ESCALATED_KEY, ChildResult, ChildStatus, SubAgentRunner
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
    WorkspaceError,
)
from neta.fuzzy_match.patching import PatchOutcome, patch_file
from neta.fuzzy_match.textfile import TextFile, atomic_write, read_text
from neta.home import neta_home
from neta.hookspecs import hookimpl, hookspec
from neta.host_settings import HostSettings
from neta.plugins import NetaPluginManager, PluginInfo, create_plugin_manager
from neta.providers.base import ModelRequest, ModelResponse, Provider, ProviderSpec
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent, AgentSession, RunResult
from neta.session import ClarifyFn, EntryKind, EventSink, SessionContext
from neta.session_tools import BoundTool, build_session_tools, resolve_session_toolsets
from neta.todos import (
    MAX_TODO_CHARS,
    MAX_TODOS,
    InMemoryTodoStore,
    TodoChange,
    TodoItem,
    TodoSnapshot,
    TodoStatus,
    TodoStore,
    apply_todo_changes,
)
from neta.tools import Tool, ToolCall, ToolResult
from neta.toolsets import (
    TOOLSET_DEFAULTS,
    ToolsetDecision,
    ToolsetResolution,
    ToolsetSpec,
    resolve_toolsets,
)
from neta.workspace import resolve_in_workspace

__version__ = "0.1.0"

__all__ = [
    "CREW_PARENT",
    "ESCALATED_KEY",
    "MAX_TODOS",
    "MAX_TODO_CHARS",
    "TOOLSET_DEFAULTS",
    "Agent",
    "AgentSession",
    "AmbiguousMatchError",
    "BoundTool",
    "Catalog",
    "ChildResult",
    "ChildStatus",
    "ClarifyFn",
    "ConfigError",
    "EntryKind",
    "EventSink",
    "HostSettings",
    "InMemoryTodoStore",
    "InvalidEditError",
    "MatchError",
    "ModelRequest",
    "ModelResponse",
    "NetaError",
    "NetaPluginManager",
    "NoMatchError",
    "PatchOutcome",
    "PluginError",
    "PluginInfo",
    "Provider",
    "ProviderError",
    "ProviderSpec",
    "RunResult",
    "ScriptedProvider",
    "SessionContext",
    "SubAgentRunner",
    "TextFile",
    "TodoChange",
    "TodoItem",
    "TodoSnapshot",
    "TodoStatus",
    "TodoStore",
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
    "WorkspaceError",
    "apply_todo_changes",
    "atomic_write",
    "build_session_tools",
    "create_plugin_manager",
    "hookimpl",
    "hookspec",
    "neta_home",
    "patch_file",
    "read_text",
    "resolve_in_workspace",
    "resolve_session_toolsets",
    "resolve_toolsets",
]
