"""``BodyLimit``: request bodies larger than the limit are refused as they stream in."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from neta.errors import BadFrame
from neta.hosting.protocol import http_status

DRAIN_BYTES = 4 << 20
"""How much of a refused body is read and thrown away so the client can still read the 413."""
DRAIN_SECONDS = 5.0
"""How long a refused body is drained at most."""


class BodyLimit:
    """ASGI middleware: an HTTP request body over ``limit`` bytes gets 413, whatever its framing.

    A declared ``Content-Length`` over the limit is refused before anything is read; a chunked
    body is counted as it arrives and refused the moment it passes the limit, so no more than
    ``limit`` bytes of it are ever held. The body the app sees is the one that was read.

    A refused body is still read and discarded, up to ``DRAIN_BYTES`` and ``DRAIN_SECONDS``,
    before the 413 goes out: a connection closed with unread bytes in it is reset, and the
    reset can destroy the response before the client reads it. A client that sends more than
    that gets the 413 only if it reads while it sends.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read the body within the limit, then hand the request on (or refuse it)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            if int(declared) <= DRAIN_BYTES:
                await _drain(receive, 0)
            await self._refuse(send, f"request body of {int(declared)} bytes")
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client left
            body += message.get("body", b"")
            if len(body) > self.limit:
                if message.get("more_body", False):
                    await _drain(receive, len(body))
                await self._refuse(send, "request body")
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send, what: str) -> None:
        refused = BadFrame(f"{what} exceeds the {self.limit}-byte limit", code="frame_too_large")
        payload: dict[str, Any] = {"detail": str(refused), "code": refused.code}
        body = json.dumps(payload).encode()
        await send(
            {
                "type": "http.response.start",
                "status": http_status(refused),
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


async def _drain(receive: Receive, already: int) -> None:
    """Read and drop the rest of a request body, within ``DRAIN_BYTES`` and ``DRAIN_SECONDS``."""
    seen = already
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(DRAIN_SECONDS):
            while seen <= DRAIN_BYTES:
                message = await receive()
                if message["type"] != "http.request":
                    return
                seen += len(message.get("body", b""))
                if not message.get("more_body", False):
                    return
