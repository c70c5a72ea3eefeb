"""Neta sessions' tools served to MCP clients (the SDK's low-level ``Server``).

Each client's requests go to its own Neta session (``ServedSession``): over stdio the one
session of the one client, over streamable HTTP one per client (``ClientSessions``). Tools are
listed with the catalog's schemas and called with the catalog's validation; a result is the
tool's text (``isError`` when it failed). ``clarify`` asks the client through an elicitation
request (choices as an ``enum``) when the client declared the elicitation capability on a
connection that can carry server requests; otherwise it degrades exactly as over REST (the
question comes back as the result). Todo updates also go to the client as log messages
(logger ``neta.todo``) while the call that made them runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import time
import warnings
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neta import __version__
from neta.errors import ToolError
from neta.events import TodoUpdate
from neta.runtime.agent import AgentSession
from neta.runtime.attempt import DEFAULT_OUTPUT_LIMIT, DEFAULT_TOOL_TIMEOUT
from neta.session_tools import BoundTool
from neta.tools import ToolResult
from neta.truncation import truncate_middle

if TYPE_CHECKING:
    import mcp_types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

TODO_LOGGER = "neta.todo"
"""The logger name todo updates are sent under."""

INSTRUCTIONS = (
    "Neta's tools for one workspace: file tools confined to it, a patch tool that refuses "
    "rather than guess, a todo list, and clarify to ask the user."
)


@dataclass
class _Request:
    """The tools/call in progress in this task (and in the worker threads it starts)."""

    context: ServerRequestContext[Any, Any]
    loop: asyncio.AbstractEventLoop
    notices: list[concurrent.futures.Future[None]] = field(default_factory=list)


_CURRENT: contextvars.ContextVar[_Request | None] = contextvars.ContextVar(
    "neta_mcp_request", default=None
)

SessionFor = Callable[
    ["ServerRequestContext[Any, Any]"], AbstractAsyncContextManager["ServedSession"]
]
"""Gives the session of the client a request comes from, for the request's time."""


class ServedSession:
    """One Neta session serving one MCP client: its tools, todo list and questions.

    Its sequential tools (``clarify``, ``bash``) run one at a time, this client's only: a
    question one client leaves unanswered holds up no other client.

    Args:
        session: the Neta session (built with the toolset rules).
        tool_timeout: seconds a call may take unless the tool sets its own.

    Attributes:
        running: calls in progress.
        last_used: when a request last reached it (``time.monotonic()``).
    """

    def __init__(
        self, session: AgentSession, *, tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    ) -> None:
        self.session = session
        self.tool_timeout = tool_timeout
        self.running = 0
        self.last_used = time.monotonic()
        self._sequential = asyncio.Lock()
        session.context.emit = self._emit

    def list_tools(self) -> mcp_types.ListToolsResult:
        """The session's tools with the catalog's schemas."""
        from mcp_types import ListToolsResult
        from mcp_types import Tool as McpTool

        self.last_used = time.monotonic()
        return ListToolsResult(
            tools=[
                McpTool(
                    name=name,
                    description=bound.schema.description,
                    input_schema=bound.schema.parameters(),
                )
                for name, bound in self.session.tools.items()
            ]
        )

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        """Validate the arguments, run the tool, and answer with its (bounded) text."""
        self.running += 1
        try:
            return await self._call_tool(ctx, params)
        finally:
            self.running -= 1
            self.last_used = time.monotonic()

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        bound = self.session.tools.get(params.name)
        if bound is None:
            listing = ", ".join(self.session.tools) or "none"
            return _result(f"Error: unknown tool {params.name!r}. Available: {listing}.", True)
        try:
            args = bound.schema.validate_arguments(dict(params.arguments or {}))
        except ToolError as exc:
            return _result(f"Error: {exc}", True)
        request = _Request(ctx, asyncio.get_running_loop())
        token = _CURRENT.set(request)
        try:
            outcome = await self._invoke(bound, args, ctx)
        finally:
            _CURRENT.reset(token)
        for notice in request.notices:  # the client gets the updates before the result
            await asyncio.wrap_future(notice)
        text = truncate_middle(outcome.content, DEFAULT_OUTPUT_LIMIT)
        return _result(text, outcome.is_error)

    async def _invoke(
        self, bound: BoundTool, args: Any, ctx: ServerRequestContext[Any, Any]
    ) -> ToolResult:
        timeout = bound.tool.timeout or self.tool_timeout
        try:
            if not bound.tool.sequential:
                return await asyncio.wait_for(bound.tool.invoke(args), timeout)
            async with self._sequential:  # clarify is sequential: it reads the channel set here
                self.session.context.clarify = self._ask if _can_elicit(ctx) else None
                try:
                    return await asyncio.wait_for(bound.tool.invoke(args), timeout)
                finally:
                    self.session.context.clarify = None  # no channel outside this call
        except ToolError as exc:
            return ToolResult(f"Error: {exc}", is_error=True)
        except TimeoutError:
            return ToolResult(f"Error: tool {bound.name!r} timed out after {timeout:g} s", True)
        except Exception as exc:
            return ToolResult(
                f"Error: tool {bound.name!r} failed: {type(exc).__name__}: {exc}", True
            )

    async def _ask(self, question: str, choices: Sequence[str] | None) -> str:
        """Clarify as an elicitation request to the client; an empty answer unless accepted."""
        request = _CURRENT.get()
        if request is None:
            return ""
        answer: dict[str, Any] = {"type": "string", "title": "Answer", "description": question}
        if choices:
            answer["enum"] = list(choices)
        schema = {"type": "object", "properties": {"answer": answer}, "required": ["answer"]}
        session = request.context.session
        result = await session.elicit_form(
            question, schema, related_request_id=request.context.request_id
        )
        if result.action != "accept" or not result.content:
            return ""
        return str(result.content.get("answer", ""))

    def _emit(self, event: Any) -> None:
        request = _CURRENT.get()
        if request is None or not isinstance(event, TodoUpdate):
            return
        data = {"todos": event.todos, "counts": event.counts, "revision": event.revision}
        notice = asyncio.run_coroutine_threadsafe(_log(request, data), request.loop)
        request.notices.append(notice)


class SessionServer:
    """Serves Neta sessions' tools to MCP clients, each request in its client's session.

    Args:
        session_for: the session of the client a request comes from.
    """

    def __init__(self, session_for: SessionFor) -> None:
        self.session_for = session_for

    @classmethod
    def of(cls, served: ServedSession) -> SessionServer:
        """A server whose every request goes to ``served`` (stdio's one client)."""

        @asynccontextmanager
        async def always(ctx: ServerRequestContext[Any, Any]) -> AsyncIterator[ServedSession]:
            yield served

        return cls(always)

    def build(self) -> Server[Any]:
        """The SDK server with these handlers."""
        from mcp.server.lowlevel import Server

        return Server(
            "neta",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: Any
    ) -> mcp_types.ListToolsResult:
        async with self.session_for(ctx) as served:
            return served.list_tools()

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        async with self.session_for(ctx) as served:
            return await served.call_tool(ctx, params)


async def _log(request: _Request, data: dict[str, Any]) -> None:
    from mcp.shared.exceptions import MCPDeprecationWarning

    with warnings.catch_warnings():  # deprecated for 2026-07-28 clients, who drop it anyway
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await request.context.session.send_log_message(
            "info", data, logger=TODO_LOGGER, related_request_id=request.context.request_id
        )


def _can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    declared = capabilities is not None and capabilities.elicitation is not None
    return declared and ctx.session.can_send_request


def _result(text: str, is_error: bool) -> mcp_types.CallToolResult:
    from mcp_types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)
