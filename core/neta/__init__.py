"""Neta: a framework for tool-using LLM agents whose tools come from plugins.

Plugins and hosts import from this module. A few topics keep their specialist names in a
public module of their own, each with its ``__all__``: ``neta.events`` (every event type),
``neta.todos`` (the todo model, its limits and ``apply_todo_changes``, for todo store
implementers), ``neta.crew`` (the crew capability names), ``neta.memory``,
``neta.fuzzy_match`` (the matcher), ``neta.paths`` (files and folders confined to the workspace)
and ``neta.sandbox`` (the bubblewrap sandbox commands run in).
Every other module is internal.
"""

from neta.catalog import Catalog, ToolSchema
from neta.crew import ChildResult, ChildStatus, SubAgentRunner
from neta.errors import (
    AmbiguousMatchError,
    AnswerRefused,
    BadFrame,
    Busy,
    ConfigError,
    HostError,
    InvalidEditError,
    MatchError,
    NetaError,
    NoMatchError,
    PluginError,
    ProviderError,
    SessionDeleted,
    SessionOwned,
    StorageUnavailable,
    ToolConflictError,
    ToolError,
    ToolRetry,
    UnknownSession,
    WorkspaceError,
)
from neta.events import (
    ApprovalRequested,
    ClarifyRequest,
    Event,
    Outcome,
    PermissionDecided,
    ProviderRetry,
    RunFinished,
    RunStarted,
    TextDelta,
    TodoUpdate,
    ToolCallStart,
    ToolProgress,
    ToolResultEvent,
)
from neta.fuzzy_match import FuzzyMatch, Replacement, fuzzy_find_all, fuzzy_replace
from neta.fuzzy_match.patching import PatchOutcome, patch_file, text_diff
from neta.fuzzy_match.textfile import TextFile, WrittenText, atomic_write, read_text, write_text
from neta.home import neta_home
from neta.hookspecs import hookimpl
from neta.host_settings import HostSettings
from neta.memory import Memory, MemoryStore
from neta.messages import Message, Usage
from neta.paths import PinnedRoot, printable, resolve_in_workspace
from neta.permissions import ApprovalAnswer, ApprovalRequest, ApproveFn
from neta.plugins import NetaPluginManager, PluginInfo, create_plugin_manager
from neta.providers.base import ModelRequest, ModelResponse, Provider, ProviderSpec, TextSink
from neta.providers.client_pool import ClientPool, active_pool
from neta.providers.endpoint import provider_endpoint
from neta.providers.retry import RetryPolicy, parse_retry_after
from neta.providers.scripted import ScriptedProvider
from neta.providers.tls import client_context as tls_client_context
from neta.runtime.agent import Agent, AgentSession, RunResult
from neta.sandbox import SandboxLimits, SandboxPolicy
from neta.session import ClarifyFn, EntryKind, EventSink, SessionCapabilities, SessionContext
from neta.session_tools import BoundTool, build_session_tools, resolve_session_toolsets
from neta.terminal_text import sanitize
from neta.todos import InMemoryTodoStore, TodoItem, TodoSnapshot, TodoStatus, TodoStore
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
    "Agent",
    "AgentSession",
    "AmbiguousMatchError",
    "AnswerRefused",
    "ApprovalAnswer",
    "ApprovalRequest",
    "ApprovalRequested",
    "ApproveFn",
    "BadFrame",
    "BoundTool",
    "Busy",
    "Catalog",
    "ChildResult",
    "ChildStatus",
    "ClarifyFn",
    "ClarifyRequest",
    "ClientPool",
    "ConfigError",
    "EntryKind",
    "Event",
    "EventSink",
    "FuzzyMatch",
    "HostError",
    "HostSettings",
    "InMemoryTodoStore",
    "InvalidEditError",
    "MatchError",
    "Memory",
    "MemoryStore",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "NetaError",
    "NetaPluginManager",
    "NoMatchError",
    "Outcome",
    "PatchOutcome",
    "PermissionDecided",
    "PinnedRoot",
    "PluginError",
    "PluginInfo",
    "Provider",
    "ProviderError",
    "ProviderRetry",
    "ProviderSpec",
    "Replacement",
    "RetryPolicy",
    "RunFinished",
    "RunResult",
    "RunStarted",
    "SandboxLimits",
    "SandboxPolicy",
    "ScriptedProvider",
    "SessionCapabilities",
    "SessionContext",
    "SessionDeleted",
    "SessionOwned",
    "StorageUnavailable",
    "SubAgentRunner",
    "TextDelta",
    "TextFile",
    "TextSink",
    "TodoItem",
    "TodoSnapshot",
    "TodoStatus",
    "TodoStore",
    "TodoUpdate",
    "Tool",
    "ToolCall",
    "ToolCallStart",
    "ToolConflictError",
    "ToolError",
    "ToolProgress",
    "ToolResult",
    "ToolResultEvent",
    "ToolRetry",
    "ToolSchema",
    "ToolsetDecision",
    "ToolsetResolution",
    "ToolsetSpec",
    "UnknownSession",
    "Usage",
    "WorkspaceError",
    "WrittenText",
    "active_pool",
    "atomic_write",
    "build_session_tools",
    "create_plugin_manager",
    "fuzzy_find_all",
    "fuzzy_replace",
    "hookimpl",
    "neta_home",
    "parse_retry_after",
    "patch_file",
    "printable",
    "provider_endpoint",
    "read_text",
    "resolve_in_workspace",
    "resolve_session_toolsets",
    "resolve_toolsets",
    "sanitize",
    "text_diff",
    "tls_client_context",
    "write_text",
]
