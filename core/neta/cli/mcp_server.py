"""Neta sessions' tools served to MCP clients (the SDK's low-level ``Server``).

Each client's requests go to its own Neta session (``ServedSession``): over stdio the one
session of the one client, over streamable HTTP one per client (``ClientSessions``). Tools are
listed with the catalog's schemas and called with the catalog's validation; a result is the
tool's text (``isError`` when it failed). ``clarify`` asks the client through an elicitation
request (choices as an ``enum``) when the client declared the elicitation capability on a
connection that can carry server requests; otherwise it degrades exactly as over REST (the
question comes back as the result). Todo updates also go to the client as log messages
(logger ``neta.todo``) while the call that made them runs.

Every call first passes the session's permission gate (``neta.runtime.gate``), as a model's
would. A call the policy says to ask about is asked of the client by an elicitation request:
the title, the preview (the command, or the diff an edit would make) and why it asks, with a
``choice`` among the offered answers (``allow_once``, ``allow_always`` when offered,
``deny``) and an optional ``reason`` the caller reads when it denies. A declined or cancelled
elicitation denies the call. A client that cannot be asked (no elicitation capability, or no
way back to it) gets the gate's denial that says nobody can approve the call here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import dataclasses
import json
import time
import warnings
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neta import __version__
from neta.errors import ToolError
from neta.events import TodoUpdate
from neta.permissions import ApprovalAnswer, ApprovalRequest, Choice, Policy
from neta.runtime.agent import AgentSession
from neta.runtime.gate import Gate
from neta.runtime.limits import DEFAULT_OUTPUT_LIMIT, DEFAULT_TOOL_TIMEOUT
from neta.session_tools import BoundTool
from neta.tools import ToolCall, ToolResult
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

APPROVER = "mcp client"
"""Who an answer to an approval elicitation is recorded as given by."""

PREVIEW_LIMIT = 8_000
"""Characters of a call's preview an approval elicitation shows (head and tail kept)."""


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
    question one client leaves unanswered holds up no other client. So are its approval
    questions (one at a time, per client).

    Args:
        session: the Neta session (built with the toolset rules and its permission policy).
        tool_timeout: seconds a call may take unless the tool sets its own.
        policy: reads the policy in force anew (``Agent.policy``), once an "allow always"
            answer was kept; without it the session keeps the policy it started with (the
            answer still holds for later sessions).

    Attributes:
        running: calls in progress.
        last_used: when a request last reached it (``time.monotonic()``).
    """

    def __init__(
        self,
        session: AgentSession,
        *,
        tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
        policy: Callable[[], Policy] | None = None,
    ) -> None:
        self.session = session
        self.tool_timeout = tool_timeout
        self.running = 0
        self.last_used = time.monotonic()
        self._read_policy = policy
        self._sequential = asyncio.Lock()
        self._asking = asyncio.Lock()
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
            call = ToolCall(str(ctx.request_id), bound.name, _json(params.arguments))
            outcome = await self._refusal(call, bound, args, ctx)
            if outcome is None:
                outcome = await self._invoke(bound, args, ctx)
        finally:
            _CURRENT.reset(token)
        for notice in request.notices:  # the client gets the updates before the result
            await asyncio.wrap_future(notice)
        text = truncate_middle(outcome.content, DEFAULT_OUTPUT_LIMIT)
        return _result(text, outcome.is_error)

    async def _refusal(
        self, call: ToolCall, bound: BoundTool, args: Any, ctx: ServerRequestContext[Any, Any]
    ) -> ToolResult | None:
        """``None`` when the gate lets the call run, else the result the client reads instead.

        The gate asks through ``_approve`` when this request can elicit, else through no one
        (a client's ``clarify`` is no way to approve: it answers only in the next call).
        """
        asked_here = dataclasses.replace(
            self.session.context,
            approve=self._approve if _can_elicit(ctx) else None,
            clarify=None,
            defer_approvals=False,  # no next message answers it: the call is denied instead
        )
        gate = Gate(self._policy_for_gate(), asked_here, self._emit)
        try:
            return await gate.check(call, bound, args)
        except Exception as exc:  # the client failed to answer: the call does not run
            reason = f"{type(exc).__name__}: {exc}"
            return ToolResult(f"Error: not run: the client could not be asked: {reason}", True)

    def _policy_for_gate(self) -> Callable[[], Policy]:
        """The session's policy, for a new gate.

        Read anew when the gate asks again (an "allow always" answer was kept), and kept for
        the session's later calls.
        """
        built = False

        def policy() -> Policy:
            nonlocal built
            if built and self._read_policy is not None:
                self.session.context.permissions = self._read_policy()
            built = True
            return self.session.context.permissions

        return policy

    async def _approve(self, request: ApprovalRequest) -> ApprovalAnswer:
        """An approval as an elicitation request to the client: a denial unless it accepts."""
        current = _CURRENT.get()
        if current is None:
            return ApprovalAnswer("deny", "nobody could be asked", APPROVER)
        async with self._asking:
            result = await current.context.session.elicit_form(
                _approval_message(request),
                _approval_schema(request),
                related_request_id=current.context.request_id,
            )
        if result.action != "accept" or not result.content:
            return ApprovalAnswer("deny", "", APPROVER)
        return _approval_answer(result.content, request.choices)

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


def _approval_message(request: ApprovalRequest) -> str:
    """What the client shows: which tool wants to do what, the preview, and why it asks."""
    lines = [
        f"Approval needed: {request.title}",
        truncate_middle(request.preview, PREVIEW_LIMIT),
        f"Why it asks: {request.reason}",
    ]
    if request.always:
        lines.append("'allow_always' keeps: " + ", ".join(request.always))
    return "\n\n".join(line for line in lines if line)


def _approval_schema(request: ApprovalRequest) -> dict[str, Any]:
    """The form: one of the offered choices, and an optional reason for a denial."""
    choice = {
        "type": "string",
        "title": "Answer",
        "description": "allow_once runs this call; allow_always also keeps the rules shown; "
        "deny does not run it.",
        "enum": list(request.choices),
    }
    reason = {
        "type": "string",
        "title": "Reason",
        "description": "Optional: why you deny it (the caller reads this).",
    }
    return {
        "type": "object",
        "properties": {"choice": choice, "reason": reason},
        "required": ["choice"],
    }


def _approval_answer(content: dict[str, Any], offered: Sequence[Choice]) -> ApprovalAnswer:
    """The client's accepted form as an answer: a choice not offered is a denial."""
    said = str(content.get("choice", "")).strip()
    reason = str(content.get("reason") or "").strip()
    choice = next((option for option in offered if option == said), None)
    if choice is None:
        return ApprovalAnswer("deny", reason or f"not an offered answer: {said!r}", APPROVER)
    return ApprovalAnswer(choice, reason if choice == "deny" else "", APPROVER)


def _json(arguments: dict[str, Any] | None) -> str:
    return json.dumps(arguments or {}, ensure_ascii=False, default=str)


def _can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    declared = capabilities is not None and capabilities.elicitation is not None
    return declared and ctx.session.can_send_request


def _result(text: str, is_error: bool) -> mcp_types.CallToolResult:
    from mcp_types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)
