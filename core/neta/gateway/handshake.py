"""The HTTP and WebSocket protocols ``neta serve`` runs: uvicorn's, with bounded handshakes.

Three gaps are closed here. Every connection sends at once (``TCP_NODELAY``): asyncio sets
that only on sockets that name TCP as their protocol, and the listening socket uvicorn makes
for ``--workers`` does not, so the last piece of each answer (and each WebSocket frame sent
while one was still unacknowledged) waited for the client's delayed acknowledgement, about
40 ms on Linux. A request head (the request line and headers) must arrive within
``head_seconds`` of its first byte, or of the connection opening, so that a client sending it
a byte at a time (slow-loris) cannot hold a socket for ever. And a WebSocket upgrade the
WebSocket parser refuses (a request line over 8 KiB, a malformed header) is answered with the
parser's 400 and closed instead of being left without an answer.

A stopping server (SIGTERM) asks every connection to shut down. Both protocols then begin the
app's drain (the function its lifespan gives under ``BEGIN_DRAIN``), and an open WebSocket is
left to the app, which closes it once its session's run has ended (``neta.hosting.drain``),
instead of being closed at once with nothing said.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

DEFAULT_HEAD_SECONDS = 10.0

BEGIN_DRAIN = "neta.begin_drain"
"""The key of the app's lifespan state whose function begins the app's drain."""


def _begin_drain(app_state: dict[str, Any]) -> bool:
    """Begin the app's drain; whether it has one (its lifespan gave ``BEGIN_DRAIN``)."""
    begin = app_state.get(BEGIN_DRAIN)
    if begin is None:
        return False
    begin()
    return True


class _HeadTimedH11(H11Protocol):
    """HTTP/1.1 whose request heads must arrive within ``head_seconds``."""

    head_seconds = DEFAULT_HEAD_SECONDS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        _send_without_delay(transport)
        super().connection_made(transport)
        self._head_timer: asyncio.TimerHandle | None = None
        self._arm_head_timer()

    def data_received(self, data: bytes) -> None:
        if self._head_timer is None and self.conn.their_state is h11.IDLE:
            self._arm_head_timer()  # the first byte of the next request on this connection
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE or self.transport.get_protocol() is not self:
            self._disarm_head_timer()  # the head is complete (or the connection upgraded)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        _begin_drain(self.app_state)
        super().shutdown()

    def _arm_head_timer(self) -> None:
        self._head_timer = self.loop.call_later(self.head_seconds, self._head_too_slow)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self.transport.get_protocol() is self and not self.transport.is_closing():
            self.transport.close()


def _send_without_delay(transport: asyncio.BaseTransport) -> None:
    """Turn off Nagle's algorithm on a TCP connection (a Unix socket has none)."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):  # already closed by the client
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _AnsweringWebSocketProtocol(WebSocketsSansIOProtocol):
    """The WebSocket protocol, answering a handshake its parser refused."""

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if not self.handshake_initiated and self.conn.handshake_exc is not None:
            self.transport.write(b"".join(self.conn.data_to_send()))  # the parser's 400
            self.handshake_complete = True
            self.close_sent = True
            self.transport.close()

    def shutdown(self) -> None:
        accepted = self.handshake_complete and self.initial_response is None
        if accepted and not self.close_sent and _begin_drain(self.app_state):
            return  # the app closes it when the drain lets its client go
        super().shutdown()


def protocol_options(head_seconds: float = DEFAULT_HEAD_SECONDS) -> dict[str, Any]:
    """The ``http`` and ``ws`` protocol classes to give uvicorn (``uvicorn.Config(**...)``)."""
    http = type("NetaHTTPProtocol", (_HeadTimedH11,), {"head_seconds": head_seconds})
    return {"http": http, "ws": _AnsweringWebSocketProtocol}


def protocol_import_strings() -> dict[str, str]:
    """``protocol_options()`` as import strings, for uvicorn's worker processes.

    A worker process imports its protocols by name; the head timeout is the default one.
    """
    return {"http": f"{__name__}:_HeadTimedH11", "ws": f"{__name__}:_AnsweringWebSocketProtocol"}
