"""``ClientSessions``: one Neta session per client of ``neta mcp serve --http``.

A client of the streamable HTTP transport has an MCP session (the ``Mcp-Session-Id`` header of
its requests); its Neta session (own todo list, own questions, own sequential calls) starts
with its first request after ``initialize`` and ends when the client ends its MCP session
(``DELETE``), after ``idle_timeout`` seconds with no request and no call running (the SDK
forgets the MCP session then too), or when the server stops.

The header is believed only for a request the SDK served in that session: the SDK checks it
(an id it did not give is a 404) on the path of the handshake revisions alone. A request of
the 2026-07-28 revision has no MCP session and takes another path, the header unchecked: it
gets a Neta session of its own, ended with the request, whatever id it names. At most
``max_sessions`` sessions live at once (the SDK refuses an ``initialize`` past as many MCP
sessions; a request that would start one more Neta session is refused with an MCP error).
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
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

IDLE_TIMEOUT = 30 * 60.0
"""Seconds a client's session lives without a request (the SDK's own default)."""

MAX_SESSIONS = 64
"""Client sessions live at once at most (an MCP session's, or one request's)."""

SESSION_HEADER = "mcp-session-id"
"""The header naming a request's MCP session."""


class ClientSessions:
    """The Neta sessions of ``agent``'s MCP clients, by MCP session id.

    Args:
        agent: makes each client's session (with no crew runner: no model here) and reads
            the permission policy they are held to.
        idle_timeout: seconds a session lives without a request and with no call running.
        max_sessions: sessions live at once at most.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        idle_timeout: float = IDLE_TIMEOUT,
        max_sessions: int = MAX_SESSIONS,
    ) -> None:
        self.agent = agent
        self.idle_timeout = idle_timeout
        self.max_sessions = max_sessions
        self._sessions: dict[str, ServedSession] = {}
        self._passing = 0  # sessions of a single request, live now
        self._sdk: StreamableHTTPSessionManager | None = None
        self._reaper: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, mcp_session_id: object) -> bool:
        return mcp_session_id in self._sessions

    def http_app(self, server: Server[Any], *, host: str) -> Callable[..., Any]:
        """The streamable HTTP app of ``server`` (built on ``session_for``), ``watch``-ed.

        Its MCP sessions end after ``idle_timeout`` and number ``max_sessions`` at most.
        """
        app = server.streamable_http_app(
            host=host, session_idle_timeout=self.idle_timeout, max_sessions=self.max_sessions
        )
        self._sdk = server.session_manager
        return self.watch(app)

    @asynccontextmanager
    async def session_for(
        self, ctx: ServerRequestContext[Any, Any]
    ) -> AsyncIterator[ServedSession]:
        """The session of the client ``ctx``'s request comes from (started on its first).

        Raises:
            MCPError: ``max_sessions`` sessions are live and this request would start one more.
        """
        key = self._mcp_session(ctx)
        if key is not None:
            self._reap_soon()
            yield self.session(key)
            return
        self._admit()
        served = self._new_session()  # one request's
        self._passing += 1
        try:
            yield served
        finally:
            try:
                await asyncio.to_thread(self.agent.end_session, served.session)
            finally:
                self._passing -= 1

    def session(self, mcp_session_id: str) -> ServedSession:
        """The session of MCP session ``mcp_session_id``, started if it has none yet.

        Raises:
            MCPError: it has none and ``max_sessions`` sessions are live.
        """
        served = self._sessions.get(mcp_session_id)
        if served is None:
            self._admit()
            served = self._new_session()
            self._sessions[mcp_session_id] = served
        served.last_used = time.monotonic()
        return served

    async def end(self, mcp_session_id: str) -> None:
        """End the session of ``mcp_session_id``, if it has one (the plugins clean up)."""
        served = self._sessions.pop(mcp_session_id, None)
        if served is not None:
            await asyncio.to_thread(self.agent.end_session, served.session)

    async def end_idle(self) -> None:
        """End every session with no call running that is idle or whose MCP session ended."""
        now = time.monotonic()
        for key, served in list(self._sessions.items()):
            gone = self._sdk is not None and not self._live(key)
            if not served.running and (gone or now - served.last_used >= self.idle_timeout):
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

    def _new_session(self) -> ServedSession:
        """A client's session, with no crew runner (no model here); its policy read anew."""
        session = self.agent.new_session(crew_runner=None)
        return ServedSession(session, policy=self.agent.policy)

    def _mcp_session(self, ctx: ServerRequestContext[Any, Any]) -> str | None:
        """The live MCP session the SDK served ``ctx``'s request in, if any."""
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

        if ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return None  # the sessionless revision's path: the SDK checked no session id
        headers = getattr(ctx.request, "headers", None)
        key = headers.get(SESSION_HEADER) if headers is not None else None
        return key if key and self._live(key) else None

    def _live(self, mcp_session_id: str) -> bool:
        """Whether the SDK made MCP session ``mcp_session_id`` and has not ended it."""
        if self._sdk is None:
            return False
        # the SDK's own record of its sessions (it offers no public one): a transport by id
        transport = self._sdk._server_instances.get(mcp_session_id)
        return transport is not None and not transport.is_terminated

    def _admit(self) -> None:
        from mcp import MCPError
        from mcp_types import INTERNAL_ERROR

        if len(self._sessions) + self._passing >= self.max_sessions:
            raise MCPError(
                code=INTERNAL_ERROR,
                message=f"this server keeps at most {self.max_sessions} client sessions at "
                "once and has as many: try again when one ends (its client ends it, or it is "
                f"idle for {self.idle_timeout:g} s)",
            )

    def _reap_soon(self) -> None:
        """Start ending idle sessions in the background (once, in the serving loop)."""
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.get_running_loop().create_task(self._reap())

    async def _reap(self) -> None:
        while self._sessions:
            await asyncio.sleep(min(60.0, self.idle_timeout / 4))
            await self.end_idle()
