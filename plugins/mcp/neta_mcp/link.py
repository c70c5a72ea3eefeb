"""One connection to an MCP server, on a thread and event loop of its own.

The SDK's client is a set of nested async context managers that must be entered and left in
one task. A link runs them in a task on its own loop, so any caller (a synchronous catalog
build, a run on the gateway's loop, a worker thread) can use the server, and a server that
hangs or dies never blocks or breaks the caller's loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import tempfile
import threading
from collections.abc import Callable, Coroutine
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from neta import SandboxPolicy, sanitize, tls_client_context
from neta import __version__ as neta_version
from neta.sandbox import confine
from neta_mcp.config import ServerConfig
from neta_mcp.tool_cache import Listing

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client

ElicitHandler = Callable[[Any], Coroutine[Any, Any, Any]]
"""Answers an ``elicitation/create`` request's params with an ``ElicitResult`` (caller's loop)."""

ProgressFn = Callable[[float, float | None, str | None], None]
"""Receives ``(progress, total, message)``; called on the link's thread."""

_CLOSE_WAIT = 10.0  # seconds close() waits for the server to exit


class LinkDown(Exception):
    """The server is not running (it failed to start, exited, or was closed); says why."""


class ServerLink:
    """A connection to one server: start it, list its tools, call them, close it.

    Args:
        name: the server's name in the configuration.
        config: how to reach it.
        workspace: the working directory of a stdio server (unless the config gives one).
        sandbox: the sandbox a stdio server runs in (``None``: unconfined).

    Attributes:
        listing: the server's tools and ``serverInfo``, once started.
        error: why the link is down; empty while it is up or not started.
        elicit: answers the server's elicitation requests; ``None`` declines them.
    """

    def __init__(
        self,
        name: str,
        config: ServerConfig,
        workspace: Path,
        *,
        sandbox: SandboxPolicy | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.workspace = workspace
        self.sandbox = sandbox
        self.listing: Listing | None = None
        self.error = ""
        self.elicit: ElicitHandler | None = None
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._client: Client | None = None
        self._callers: list[asyncio.AbstractEventLoop] = []
        # what a stdio server writes on stderr: its last line explains a failed start
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115

    def start(self) -> concurrent.futures.Future[None]:
        """Start the server once; the future completes when its tools are listed (or fails)."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"neta-mcp-{self.name}", daemon=True
                )
                self._thread.start()
        return self._ready

    def wait_started(self) -> None:
        """Start the server and wait for it; raises ``LinkDown`` with the reason it is not up."""
        try:
            self.start().result(timeout=self.config.timeout + _CLOSE_WAIT)
        except concurrent.futures.TimeoutError:
            self._down(f"did not answer within {self.config.timeout:g} s")
        except LinkDown:
            raise
        if self.error:
            raise LinkDown(self.error)

    async def started(self) -> None:
        """Start the server if needed and wait for it, from any event loop.

        Raises:
            LinkDown: the server is not running (says why).
        """
        await asyncio.wrap_future(self.start())
        if self.error or self._loop is None:
            raise LinkDown(self.error or "not running")

    async def call(
        self, tool: str, arguments: dict[str, Any], on_progress: ProgressFn | None = None
    ) -> mcp_types.CallToolResult:
        """Call ``tool`` on the server (starting it first if needed) from any event loop.

        Raises:
            LinkDown: the server is not running or stopped while answering.
        """
        await self.started()
        assert self._loop is not None
        caller = asyncio.get_running_loop()
        work = asyncio.run_coroutine_threadsafe(
            self._call(tool, arguments, on_progress, caller), self._loop
        )
        try:
            return await asyncio.wrap_future(work)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the caller was cancelled: the call on the server was too
            raise LinkDown(self.error or "the connection closed during the call") from None

    def close(self) -> None:
        """Stop the server and wait (briefly) for it to exit; safe to call more than once."""
        loop, stop, thread = self._loop, self._stop, self._thread
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(stop.set)
        if thread is not None and thread is not threading.current_thread():
            thread.join(_CLOSE_WAIT)
        if not self.error:
            self.error = "closed"
        if not self._ready.done():
            self._ready.set_exception(LinkDown(self.error))
        self._stderr.close()

    # -- on the link's own thread ---------------------------------------------------------------

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # whatever ended the link, the callers learn why
            self._down(_describe(exc) + self._stderr_tail())
        finally:
            if not self.error:
                self.error = "the server connection ended"
            if not self._ready.done():
                self._ready.set_exception(LinkDown(self.error))

    async def _main(self) -> None:
        from mcp import Client
        from mcp_types import Implementation

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with AsyncExitStack() as stack:
            client = Client(
                await self._transport(stack),
                mode="legacy",  # the handshake every server speaks; elicitation needs it
                elicitation_callback=self._on_elicit,
                client_info=Implementation(name="neta", version=neta_version),
                cache=None,
            )
            async with asyncio.timeout(self.config.timeout):
                await stack.enter_async_context(client)
                tools = await _all_tools(client)
            self.listing = _listing(tools, client.server_info)
            self._client = client
            self._ready.set_result(None)
            await self._stop.wait()

    async def _transport(self, stack: AsyncExitStack) -> Any:
        if self.config.command is not None:
            from mcp import StdioServerParameters, stdio_client

            cwd = self.workspace / self.config.cwd if self.config.cwd else self.workspace
            argv = [self.config.command, *self.config.args]
            env = self.config.env
            if self.sandbox is not None:
                # the server runs confined, like a command, its own variables set inside only
                # (bwrap itself gets the allow list; the SDK adds its few safe variables)
                confined = confine(
                    argv, policy=self.sandbox, workspace=self.workspace, cwd=cwd,
                    setenv=self.config.env,
                )  # fmt: skip
                argv, env = confined.argv, confined.env
                if confined.pids is not None:  # kept until the server has ended (LIFO)
                    stack.callback(confined.pids.release)
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)
            return stdio_client(params, errlog=cast(Any, self._stderr))
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers=self.config.headers,
                timeout=httpx2.Timeout(30, read=300),
                verify=tls_client_context(),  # the process's: not loaded again for each link
            )
        )
        return streamable_http_client(str(self.config.url), http_client=http)

    async def _call(
        self,
        tool: str,
        arguments: dict[str, Any],
        on_progress: ProgressFn | None,
        caller: asyncio.AbstractEventLoop,
    ) -> mcp_types.CallToolResult:
        if self._client is None:
            raise LinkDown(self.error or "not running")

        async def report(progress: float, total: float | None, message: str | None) -> None:
            if on_progress is not None:
                on_progress(progress, total, message)

        self._callers.append(caller)
        try:
            return await self._client.call_tool(tool, arguments, progress_callback=report)
        except Exception as exc:
            if _connection_lost(exc):
                self._down(f"the server stopped answering ({_describe(exc)}){self._stderr_tail()}")
                assert self._stop is not None
                self._stop.set()
                raise LinkDown(self.error) from exc
            raise
        finally:
            self._callers.remove(caller)

    async def _on_elicit(self, context: Any, params: Any) -> Any:
        from mcp_types import ElicitResult

        handler = self.elicit
        if handler is None or not self._callers:
            return ElicitResult(action="decline")
        answer: concurrent.futures.Future[Any] = asyncio.run_coroutine_threadsafe(
            handler(params), self._callers[-1]
        )
        return await asyncio.wrap_future(answer)

    def _down(self, reason: str) -> None:
        if not self.error or self.error == "closed":
            self.error = reason

    def _stderr_tail(self) -> str:
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            lines = [line for line in self._stderr.read().splitlines() if line.strip()]
        except (OSError, ValueError):
            return ""
        # the reason is shown on terminals: the server's bytes must not act on them
        return f"; its last output: {sanitize(lines[-1].strip()[:300])}" if lines else ""


async def _all_tools(client: Client) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(100):  # a paginator that never ends cannot hang the start
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def _listing(tools: list[mcp_types.Tool], server: mcp_types.Implementation | None) -> Listing:
    """The tools and server's name and version as MCP's JSON has them (what is cached)."""
    who = {} if server is None else {"name": server.name, "version": server.version}
    return Listing(
        tools=[tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools],
        server=who,
    )


def _connection_lost(exc: BaseException) -> bool:
    import anyio
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(exc, MCPError):
        return exc.error.code == CONNECTION_CLOSED
    return isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError | EOFError)


def _describe(exc: BaseException) -> str:
    """The innermost cause of ``exc`` (anyio wraps failures in exception groups), in words."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, LinkDown):
        return str(exc)
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text
