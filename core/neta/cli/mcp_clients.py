"""``ClientSessions``: one Neta session per client of ``neta mcp serve --http``.

A client of the streamable HTTP transport has an MCP session (the ``Mcp-Session-Id`` header of
its requests); its Neta session (own todo list, own questions, own sequential calls) starts
with its first request after ``initialize`` and ends when the client ends its MCP session
(``DELETE``), after ``idle_timeout`` seconds with no request and no call running (the SDK
forgets the MCP session then too), or when the server stops. A request of the 2026-07-28
revision has no MCP session: it gets a Neta session of its own, ended with the request.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from neta.cli.mcp_server import ServedSession
from neta.runtime.agent import Agent

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

IDLE_TIMEOUT = 30 * 60.0
"""Seconds a client's session lives without a request (the SDK's own default)."""

SESSION_HEADER = "mcp-session-id"
"""The header naming a request's MCP session."""


class ClientSessions:
    """The Neta sessions of ``agent``'s MCP clients, by MCP session id.

    Args:
        agent: makes each client's session (with no crew runner: no model here).
        idle_timeout: seconds a session lives without a request and with no call running.
    """

    def __init__(self, agent: Agent, *, idle_timeout: float = IDLE_TIMEOUT) -> None:
        self.agent = agent
        self.idle_timeout = idle_timeout
        self._sessions: dict[str, ServedSession] = {}
        self._reaper: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, mcp_session_id: object) -> bool:
        return mcp_session_id in self._sessions

    @asynccontextmanager
    async def session_for(
        self, ctx: ServerRequestContext[Any, Any]
    ) -> AsyncIterator[ServedSession]:
        """The session of the client ``ctx``'s request comes from (started on its first)."""
        headers = getattr(ctx.request, "headers", None)
        key = headers.get(SESSION_HEADER) if headers is not None else None
        if key:
            self._reap_soon()
            yield self.session(key)
            return
        served = ServedSession(self.agent.new_session(crew_runner=None))  # one request's
        try:
            yield served
        finally:
            await asyncio.to_thread(self.agent.end_session, served.session)

    def session(self, mcp_session_id: str) -> ServedSession:
        """The session of MCP session ``mcp_session_id``, started if it has none yet."""
        served = self._sessions.get(mcp_session_id)
        if served is None:
            served = ServedSession(self.agent.new_session(crew_runner=None))
            self._sessions[mcp_session_id] = served
        served.last_used = time.monotonic()
        return served

    async def end(self, mcp_session_id: str) -> None:
        """End the session of ``mcp_session_id``, if it has one (the plugins clean up)."""
        served = self._sessions.pop(mcp_session_id, None)
        if served is not None:
            await asyncio.to_thread(self.agent.end_session, served.session)

    async def end_idle(self) -> None:
        """End every session idle for ``idle_timeout`` seconds with no call running."""
        now = time.monotonic()
        for key, served in list(self._sessions.items()):
            if not served.running and now - served.last_used >= self.idle_timeout:
                await self.end(key)

    def close(self) -> None:
        """End every session (the server stopped)."""
        if self._reaper is not None:
            self._reaper.cancel()
        sessions, self._sessions = list(self._sessions.values()), {}
        for served in sessions:
            self.agent.end_session(served.session)

    def watch(self, app: Callable[..., Any]) -> Callable[..., Any]:
        """``app`` (the MCP ASGI app), ending a client's session when it ends its MCP session."""

        async def watched(scope: Any, receive: Any, send: Any) -> None:
            await app(scope, receive, send)
            if scope["type"] == "http" and scope.get("method") == "DELETE":
                for name, value in scope.get("headers", ()):
                    if name.decode("latin-1").lower() == SESSION_HEADER:
                        await self.end(value.decode("latin-1"))

        return watched

    def _reap_soon(self) -> None:
        """Start ending idle sessions in the background (once, in the serving loop)."""
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.get_running_loop().create_task(self._reap())

    async def _reap(self) -> None:
        while self._sessions:
            await asyncio.sleep(min(60.0, self.idle_timeout / 4))
            await self.end_idle()
