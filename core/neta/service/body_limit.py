"""``BodyLimit``: who may send a request body, how large, and how long it may take to arrive."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, Protocol

from starlette.datastructures import Headers, QueryParams
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from neta.errors import BadFrame, HostError
from neta.hosting.protocol import http_status

BODY_SECONDS = 30.0
"""How long a request body may take to arrive, all of it, once the request's head has."""
DRAIN_BYTES = 4 << 20
"""How much of an oversized body is read and thrown away so the client can still read the 413."""
DRAIN_SECONDS = 5.0
"""How long an oversized body is drained at most."""
REFUSED_DRAIN_BYTES = 64 << 10
"""How much of the body of a request refused by ``refusal`` (no token) is read, at most."""
REFUSED_DRAIN_SECONDS = 1.0
"""How long the body of a refused request is read, at most."""


class Gate(Protocol):
    """Who may reach the app: ``SessionHub.refusal``."""

    def refusal(
        self,
        *,
        authorization: str | None,
        query_token: str | None = None,
        origin: str | None = None,
        host: str | None = None,
        server: tuple[str, int | None] | None = None,
    ) -> tuple[int, str] | None:
        """Why a request may not reach the app (a status and a message), or ``None``."""


class BodyLimit:
    """ASGI middleware: the checks an HTTP request passes before its body is read, and while.

    - A request with a body is first checked against ``gate`` (its token, its origin): a
      refused one gets its 401 or 403 with at most ``REFUSED_DRAIN_BYTES`` of its body read,
      within ``REFUSED_DRAIN_SECONDS``, and its connection closed. No route that answers
      without the token takes a body, so an unauthenticated client never makes the server
      hold one.
    - A body over ``limit`` bytes gets 413: a declared ``Content-Length`` over the limit before
      anything is read, a chunked body the moment it passes the limit, so no more than
      ``limit`` bytes of it are ever held.
    - The whole body must arrive within ``seconds`` of the request's head (a client sending
      it a byte at a time included), else 408 and the connection is closed.

    The body the app sees is the one that was read. A WebSocket upgrade has no body and passes
    untouched (the gateway checks who connects before it accepts).

    An oversized body is still read and discarded, up to ``DRAIN_BYTES`` and ``DRAIN_SECONDS``
    (and within ``seconds``), before the 413 goes out: a connection closed with unread bytes in
    it is reset, and the reset can destroy the response before the client reads it. A client
    that sends more than that gets the 413 only if it reads while it sends.
    """

    def __init__(
        self,
        app: ASGIApp,
        limit: int,
        seconds: float = BODY_SECONDS,
        gate: Gate | None = None,
    ) -> None:
        self.app = app
        self.limit = limit
        self.seconds = seconds
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the request, read its body within the limits, then hand it on (or refuse it)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refused = self._refusal(scope, headers) if _has_body(headers) else None
        if refused is not None:
            if "100-continue" not in headers.get("expect", "").lower():
                await _drain(receive, 0, REFUSED_DRAIN_BYTES, REFUSED_DRAIN_SECONDS)
            status, message = refused
            extra = [(b"www-authenticate", b"Bearer")] if status == 401 else []
            await _answer(send, status, {"detail": message}, extra)
            return
        try:
            async with asyncio.timeout(self.seconds):
                body = await self._read(headers, receive)
        except TimeoutError:
            late = f"the request body did not arrive within {self.seconds:g} s"
            body = BadFrame(late, code="body_timeout")
        if isinstance(body, HostError):
            await _answer(send, http_status(body), {"detail": str(body), "code": body.code})
            return
        if body is None:
            return  # the client left
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)

    def _refusal(self, scope: Scope, headers: Headers) -> tuple[int, str] | None:
        if self.gate is None:
            return None
        return self.gate.refusal(
            authorization=headers.get("authorization"),
            query_token=QueryParams(scope.get("query_string", b"")).get("token"),
            origin=headers.get("origin"),
            host=headers.get("host"),
            server=scope.get("server"),
        )

    async def _read(self, headers: Headers, receive: Receive) -> bytearray | HostError | None:
        """The body, the refusal of a body too large, or ``None`` when the client left."""
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.limit:
            if int(declared) <= DRAIN_BYTES:
                await _drain(receive, 0, DRAIN_BYTES, DRAIN_SECONDS)
            return self._too_large(f"request body of {int(declared)} bytes")
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None
            body += message.get("body", b"")
            if len(body) > self.limit:
                if message.get("more_body", False):
                    await _drain(receive, len(body), DRAIN_BYTES, DRAIN_SECONDS)
                return self._too_large("request body")
            if not message.get("more_body", False):
                return body

    def _too_large(self, what: str) -> BadFrame:
        return BadFrame(f"{what} exceeds the {self.limit}-byte limit", code="frame_too_large")


def _has_body(headers: Headers) -> bool:
    """Whether the request announces a body (HTTP/1.1: a length above 0, or chunks)."""
    return "transfer-encoding" in headers or headers.get("content-length", "0") not in ("", "0")


async def _answer(
    send: Send,
    status: int,
    payload: dict[str, Any],
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """Send ``payload`` as JSON with ``status``, and close the connection after it.

    Closed: the rest of the request's body, if any, was not read.
    """
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *(extra or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _drain(receive: Receive, already: int, most: int, seconds: float) -> None:
    """Read and drop the rest of a request body, within ``most`` bytes and ``seconds``."""
    seen = already
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            while seen <= most:
                message = await receive()
                if message["type"] != "http.request":
                    return
                seen += len(message.get("body", b""))
                if not message.get("more_body", False):
                    return
