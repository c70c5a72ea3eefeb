"""HTTP clients for the tests' own servers, all on one TLS context.

An httpx client builds a TLS context of its own unless given one, loading the CA certificates
(~40 ms of CPU), though the servers here speak plain HTTP on 127.0.0.1. These clients share
the process's context (``neta.tls_client_context``), as neta's model API clients do.
``held_back_seconds`` asks on plain sockets instead, to choose how it acknowledges; so do the
tests that send what an HTTP client would refuse to (``answer_and_close``, ``status_of``).
"""

from __future__ import annotations

import socket
import time
from typing import Any
from urllib.parse import urlsplit

import httpx

import neta


def client(**options: Any) -> httpx.Client:
    """``httpx.Client(**options)`` on the shared TLS context."""
    return httpx.Client(verify=neta.tls_client_context(), **options)


def async_client(**options: Any) -> httpx.AsyncClient:
    """``httpx.AsyncClient(**options)`` on the shared TLS context."""
    return httpx.AsyncClient(verify=neta.tls_client_context(), **options)


def get(url: str, **options: Any) -> httpx.Response:
    """``httpx.get`` on the shared TLS context."""
    with client() as http:
        return http.get(url, **options)


def post(url: str, **options: Any) -> httpx.Response:
    """``httpx.post`` on the shared TLS context."""
    with client() as http:
        return http.post(url, **options)


DELAYED_ACK_SECONDS = 0.04
"""The shortest a Linux client waits before acknowledging what it received, unless told to
acknowledge at once."""


def held_back_seconds(base: str, requests: int = 9, headers: dict[str, str] | None = None) -> float:
    """How much longer the server at ``base`` takes to answer a client that delays its
    acknowledgements than one that acknowledges every piece at once: about zero, unless the
    server holds back each answer's last piece until the piece before is acknowledged.

    Such a server (Nagle's algorithm, no ``TCP_NODELAY``) makes the usual client wait for its
    delayed acknowledgement (``DELAYED_ACK_SECONDS`` or more) on every answer but the
    connection's first; the client that acknowledges at once (``TCP_QUICKACK``) never waits.
    Two keep-alive connections, one of each, take turns asking for a missing path
    ``requests`` times; the result is the usual one's fastest answer minus the prompt one's,
    each connection's first answer left out. A busy machine slows both alike. ``headers`` go
    with each request (the server's token).
    """
    url = urlsplit(base)
    lines = ["GET /v1/sessions/nope HTTP/1.1", f"Host: {url.netloc}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode()
    address = (url.hostname, url.port)
    usual_took, prompt_took = [], []
    with (
        socket.create_connection(address, timeout=10) as usual,
        socket.create_connection(address, timeout=10) as prompt,
    ):
        for _ in range(requests):
            usual_took.append(_answer_seconds(usual, request, acknowledge_at_once=False))
            prompt_took.append(_answer_seconds(prompt, request, acknowledge_at_once=True))
    return min(usual_took[1:]) - min(prompt_took[1:])


def _answer_seconds(sock: socket.socket, request: bytes, *, acknowledge_at_once: bool) -> float:
    """Seconds from sending ``request`` on ``sock`` to the last byte of its answer."""
    started = time.monotonic()
    sock.sendall(request)
    received = b""
    while True:
        if acknowledge_at_once:  # the kernel leaves this mode by itself: asked before each read
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection; received {received!r}"
        received += chunk
        head, end, body = received.partition(b"\r\n\r\n")
        if end and len(body) >= _content_length(head):
            return time.monotonic() - started


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    raise AssertionError(f"an answer without Content-Length: {head!r}")


def answer_and_close(sock: socket.socket) -> bytes:
    """Everything the server sends on ``sock`` until it closes the connection (a reset counts
    as closed)."""
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    return received


def status_of(received: bytes) -> int:
    """The status code of a raw HTTP answer."""
    return int(received.split(b" ", 2)[1])
