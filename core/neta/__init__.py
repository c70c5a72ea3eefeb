"""Neta: a framework for tool-using LLM agents whose tools come from plugins.

This module exports what plugin authors and host apps need, and nothing more: tools and their
schemas, toolsets, the session context and its capabilities (todos, memory, crew, clarify,
approvals), the agent, its limits, budgets and run result, providers and the scripted one to
test with, the image part messages and tool results carry, the hook marker and plugin manager, the
errors a plugin raises or catches, and the file helpers a tool confines itself with.

Plugins import from this module and from a few public modules that keep a topic's specialist
names, each with its ``__all__``: ``neta.events`` (every event type), ``neta.todos`` (the todo
model, its limits and ``apply_todo_changes``, for todo store implementers), ``neta.crew`` (the
crew capability names), ``neta.memory``, ``neta.fuzzy_match`` (the matcher and its errors),
``neta.paths`` (files and folders confined to the workspace) and ``neta.sandbox`` (the
bubblewrap sandbox commands run in).

Host apps and tests find the rest of a topic in the module named for it, each with its
``__all__`` too: ``neta.errors`` (the whole exception tree), ``neta.catalog`` (the catalog of
tool schemas), ``neta.toolsets`` (how a session's toolsets are decided), ``neta.plugins`` (the
plugin manager), ``neta.session`` (the capability names), ``neta.session_tools``,
``neta.providers.client_pool`` (the client pool a host shares), ``neta.fuzzy_match.patching``,
``neta.fuzzy_match.textfile`` and ``neta.tracing`` (OpenTelemetry traces of runs). Every other
module is internal.
"""

from neta.catalog import ToolSchema
from neta.crew import ChildResult, SubAgentRunner
from neta.errors import (
    ConfigError,
    NetaError,
    OutputValidationError,
    PluginError,
    ProviderError,
    ToolError,
    WorkspaceError,
)
from neta.events import Event
from neta.fuzzy_match.patching import patch_file, text_diff
from neta.fuzzy_match.textfile import atomic_write, read_text, write_text
from neta.home import neta_home
from neta.hookspecs import hookimpl
from neta.host_settings import HostSettings
from neta.images import ImagePart
from neta.memory import Memory, MemoryStore
from neta.messages import Message, Usage
from neta.paths import PinnedRoot, printable, resolve_in_workspace
from neta.permissions import ApprovalAnswer, ApprovalRequest, ApproveFn
from neta.plugins import create_plugin_manager
from neta.providers.base import ModelRequest, ModelResponse, Provider, ProviderSpec, TextSink
from neta.providers.client_pool import active_pool
from neta.providers.endpoint import provider_endpoint
from neta.providers.retry import RetryPolicy, parse_retry_after
from neta.providers.scripted import ScriptedProvider
from neta.providers.tls import client_context as tls_client_context
from neta.runtime.agent import Agent, AgentSession, RunResult
from neta.runtime.limits import RunLimits
from neta.runtime.usage_limits import UsageLimits
from neta.sandbox import SandboxPolicy
from neta.session import ClarifyFn, SessionContext
from neta.session_tools import build_session_tools
from neta.terminal_text import sanitize
from neta.todos import TodoSnapshot, TodoStore
from neta.tools import Tool, ToolCall, ToolResult
from neta.toolset_plugin import ToolsetPlugin
from neta.toolsets import ToolsetSpec

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentSession",
    "ApprovalAnswer",
    "ApprovalRequest",
    "ApproveFn",
    "ChildResult",
    "ClarifyFn",
    "ConfigError",
    "Event",
    "HostSettings",
    "ImagePart",
    "Memory",
    "MemoryStore",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "NetaError",
    "OutputValidationError",
    "PinnedRoot",
    "PluginError",
    "Provider",
    "ProviderError",
    "ProviderSpec",
    "RetryPolicy",
    "RunLimits",
    "RunResult",
    "SandboxPolicy",
    "ScriptedProvider",
    "SessionContext",
    "SubAgentRunner",
    "TextSink",
    "TodoSnapshot",
    "TodoStore",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolResult",
    "ToolSchema",
    "ToolsetPlugin",
    "ToolsetSpec",
    "Usage",
    "UsageLimits",
    "WorkspaceError",
    "active_pool",
    "atomic_write",
    "build_session_tools",
    "create_plugin_manager",
    "hookimpl",
    "neta_home",
    "parse_retry_after",
    "patch_file",
    "printable",
    "provider_endpoint",
    "read_text",
    "resolve_in_workspace",
    "sanitize",
    "text_diff",
    "tls_client_context",
    "write_text",
]
