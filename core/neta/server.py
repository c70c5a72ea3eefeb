"""One ASGI app serving the WebSocket gateway (``/ws``) and the REST service (``/v1``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, WebSocket

from neta.gateway.server import serve_connection
from neta.hosting.hub import HostConfig, SessionHub
from neta.service.agent_executor import router


def create_app(config: HostConfig | None = None) -> FastAPI:
    """Build the app; ``config`` defaults to an ``openai`` agent in the current directory."""
    hub = SessionHub(config or HostConfig())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await hub.shutdown()

    app = FastAPI(title="Neta", summary="Agents whose tools come from plugins", lifespan=lifespan)
    app.state.hub = hub
    app.include_router(router)

    @app.websocket("/ws")
    async def gateway(websocket: WebSocket) -> None:
        await serve_connection(websocket, hub)

    return app
