"""Host test helpers: a real uvicorn server on a free 127.0.0.1 port, in a thread, the ``serve``
fixture that starts them, and a WebSocket client."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from websockets.asyncio.client import ClientConnection, connect

import neta
import neta.plugins
import neta_base.plugin
import neta_interaction.plugin
import neta_planning.plugin
from neta.hosting.config import HostConfig
from neta.hosting.hub import SessionHub
from neta.providers.scripted import ScriptedProvider
from neta.server import create_app, uvicorn_options

ASK = {
    "tool_calls": [
        {"name": "clarify", "arguments": {"question": "Which colour?", "choices": ["red", "blue"]}}
    ]
}


def builtin_pm(*extra: Any) -> neta.plugins.NetaPluginManager:
    """A plugin manager with the built-in plugins these tests use, and ``extra`` ones."""
    return neta.create_plugin_manager(
        load_entrypoints=False,
        plugins=[
            ("base", neta_base.plugin),
            ("planning", neta_planning.plugin),
            ("interaction", neta_interaction.plugin),
            *extra,
        ],
    )


def scripted_hub(workspace: Path) -> SessionHub:
    """A hub in ``workspace`` (its home inside) whose sessions' model says "hi"."""
    return SessionHub(
        HostConfig(
            workspace=workspace,
            home=workspace / "home",
            provider_factory=lambda: ScriptedProvider([{"text": "hi"}]),
            plugin_manager=builtin_pm(),
        )
    )


class ExplodingOnce(ScriptedProvider):
    """A provider whose first call fails with a bug (not a ``ProviderError``)."""

    exploded = False

    async def complete(self, request: Any, on_text: Any) -> Any:
        if not self.exploded:
            self.exploded = True
            raise RuntimeError("boom")
        return await super().complete(request, on_text)


@dataclass
class RunningServer:
    """A server started by ``start_server``; ``stop()`` shuts it down cleanly."""

    server: uvicorn.Server
    thread: threading.Thread
    port: int
    hub: SessionHub

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The console's page."""
        return f"{self.http}/"

    def ws_url(self, **query: str) -> str:
        params = "&".join(f"{k}={v}" for k, v in query.items())
        return f"ws://127.0.0.1:{self.port}/ws" + (f"?{params}" if params else "")

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)
        assert not self.thread.is_alive(), "server did not stop"


def start_server(config: HostConfig) -> RunningServer:
    app = create_app(config)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_level="warning",
            lifespan="on",
            **uvicorn_options(config),
        )
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.01)
    return RunningServer(server, thread, port, app.state.hub)


class Client:
    """A WebSocket client that reads frames with a timeout and can wait for a frame type."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.seen: list[dict[str, Any]] = []

    async def send(self, kind: str, session_id: str | None = None, **data: Any) -> None:
        await self.ws.send(json.dumps({"type": kind, "sessionId": session_id, "data": data}))

    async def send_raw(self, text: str) -> None:
        await self.ws.send(text)

    async def next(self, timeout: float = 10) -> dict[str, Any]:
        frame = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        self.seen.append(frame)
        return frame

    async def until(self, kind: str, timeout: float = 10) -> dict[str, Any]:
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            frame = await self.next(max(0.01, deadline - asyncio.get_running_loop().time()))
            if frame["type"] == kind:
                return frame


_OPEN: list[tuple[asyncio.AbstractEventLoop, ClientConnection]] = []


async def open_client(url: str, **kwargs: Any) -> tuple[Client, dict[str, Any]]:
    """Connect and read ``session_ready``; ``drive`` closes the connection at the end."""
    ws = await connect(url, **kwargs)
    _OPEN.append((asyncio.get_running_loop(), ws))
    client = Client(ws)
    ready = await client.next()
    assert ready["type"] == "session_ready", ready
    return client, ready


def drive(scenario: Any, timeout: float = 30) -> Any:
    """Run a client scenario coroutine, then close every connection it opened."""

    async def wrapped() -> Any:
        try:
            return await asyncio.wait_for(scenario, timeout)
        finally:
            loop = asyncio.get_running_loop()
            while _OPEN:  # one opened in another loop (not in a drive) went with that loop
                opened_in, ws = _OPEN.pop()
                if opened_in is loop:
                    await ws.close()

    return asyncio.run(wrapped())


async def wait_until(condition: Any, timeout: float = 5) -> None:
    """Poll ``condition()`` until it is true (it may read the server thread's state)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


@pytest.fixture
def serve(tmp_path: Any) -> Any:
    """Start servers whose sessions each replay ``turns``; all are stopped at the end."""
    running = []
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)

    def start(turns: Any, **options: Any) -> RunningServer:
        options.setdefault("home", tmp_path / "home")
        options.setdefault("provider_factory", lambda: ScriptedProvider(turns))
        options.setdefault("plugin_manager", builtin_pm())
        config = HostConfig(workspace=workspace, **options)
        server = start_server(config)
        running.append(server)
        return server

    yield start
    for server in running:
        if server.thread.is_alive():
            server.stop()
