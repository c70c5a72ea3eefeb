"""``BodyLimit``: request bodies larger than the limit are refused as they stream in."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from neta.errors import BadFrame
from neta.hosting.protocol import http_status


class BodyLimit:
    """ASGI middleware: an HTTP request body over ``limit`` bytes gets 413, whatever its framing.

    A declared ``Content-Length`` over the limit is refused before anything is read; a chunked
    body is counted as it arrives and refused the moment it passes the limit, so no more than
    ``limit`` bytes of it are ever held. The body the app sees is the one that was read.
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
            await self._refuse(send, f"request body of {int(declared)} bytes")
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client left
            body += message.get("body", b"")
            if len(body) > self.limit:
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
