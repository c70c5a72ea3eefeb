"""One ASGI app serving the WebSocket gateway (``/ws``) and the REST service (``/v1``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request, WebSocket
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from neta import tracing
from neta.console import mount_console
from neta.errors import HostError
from neta.gateway.handshake import BEGIN_DRAIN, protocol_options
from neta.gateway.server import serve_connection
from neta.hosting.hub import HostConfig, SessionHub
from neta.hosting.protocol import http_status
from neta.service.agent_executor import router
from neta.service.body_limit import BodyLimit
from neta.service.docs import docs_router
from neta.service.monitoring import monitoring_router
from neta.service.security_headers import SecurityHeaders


def create_app(config: HostConfig | None = None) -> FastAPI:
    """Build the app; ``config`` defaults to an ``openai`` agent in the current directory."""
    hub = SessionHub(config or HostConfig())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        await hub.start()
        # the server's protocols begin the drain when it asks its connections to shut down
        yield {BEGIN_DRAIN: hub.drain.begin}
        await hub.shutdown()
        if tracing.active() is not None:  # the last runs' spans go before the process ends
            await asyncio.to_thread(tracing.flush)

    app = FastAPI(
        title="Neta",
        summary="Agents whose tools come from plugins",
        lifespan=lifespan,
        docs_url=None,  # no pages loading scripts from a CDN (neta.service.docs)
        redoc_url=None,
        openapi_url=None,  # served below, behind the same checks as the API
    )
    app.state.hub = hub
    app.include_router(router)
    app.include_router(docs_router)
    app.include_router(monitoring_router)  # /healthz, /readyz, /metrics
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(HostError, _refused)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_middleware(
        BodyLimit,
        limit=hub.config.max_frame_bytes,
        seconds=hub.config.body_timeout,
        gate=hub,  # the token is checked before a body is read
    )

    @app.websocket("/ws")
    async def gateway(websocket: WebSocket) -> None:
        await serve_connection(websocket, hub)

    mount_console(app, hub)  # last: the console's routes only take what is left
    app.add_middleware(SecurityHeaders)  # outermost: a refused request's answer has them too
    return app


class _AsciiJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


async def _refused(request: Request, exc: Exception) -> JSONResponse:
    """A ``HostError`` as REST answers it: the status of its code, ``{"detail", "code"}``."""
    if not isinstance(exc, HostError):  # pragma: no cover - registered for HostError only
        raise exc
    return _AsciiJSONResponse({"detail": str(exc), "code": exc.code}, status_code=http_status(exc))


async def _http_error(request: Request, exc: Exception) -> Response:
    """An HTTP error as FastAPI answers it; a body it could not parse as ``invalid_json``.

    FastAPI reads a body JSON itself cannot (nested deeper than Python's recursion limit) as
    a bare 400; it gets the code a WebSocket frame would, so clients need one rule.
    """
    if not isinstance(exc, HTTPException):  # pragma: no cover - registered for it only
        raise exc
    if exc.status_code == 400 and isinstance(exc.__cause__, RecursionError | ValueError):
        detail = "the body is not JSON this server can read (nested too deeply?)"
        return _AsciiJSONResponse({"detail": detail, "code": "invalid_json"}, status_code=400)
    return await http_exception_handler(request, exc)


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    """422, as FastAPI answers it, but escaped and brief.

    Escaped: the input it echoes may not be valid Unicode. Brief: a refused 200,000-character
    text is echoed as its beginning and its length, not sent back whole.
    """
    errors = jsonable_encoder(exc.errors() if isinstance(exc, RequestValidationError) else [])
    for error in errors:
        if isinstance(error, dict) and "input" in error:
            error["input"] = _brief(error["input"])
    return _AsciiJSONResponse({"detail": errors}, status_code=422)


_ECHOED_CHARS = 100


def _brief(value: Any) -> Any:
    """``value``, or when long, its first characters and its length (as JSON for non-text)."""
    text = value if isinstance(value, str) else json.dumps(value)
    if len(text) <= 2 * _ECHOED_CHARS:
        return value
    unit = "characters" if isinstance(value, str) else "characters of JSON"
    return f"{text[:_ECHOED_CHARS]}… ({len(text)} {unit})"


def uvicorn_options(config: HostConfig) -> dict[str, Any]:
    """What ``uvicorn.Config`` (or ``uvicorn.run``) needs to serve ``create_app(config)``.

    The WebSocket message limit, and protocols whose handshakes are bounded in size and time.
    """
    return {
        "ws_max_size": ws_max_size(config.max_frame_bytes),
        **protocol_options(config.handshake_timeout),
    }


def ws_max_size(max_frame_bytes: int) -> int:
    """The WebSocket server's hard message limit for a ``max_frame_bytes`` frame limit.

    A frame up to this size is read and refused with ``error {frame_too_large}``, the
    connection kept; a larger one makes the WebSocket server close the connection (1009)
    before the app sees it, which bounds the memory one frame can take.
    """
    return max(max_frame_bytes * 4, 1 << 20)
