"""HTTP clients for the tests' own servers, all on one TLS context.

An httpx client builds a TLS context of its own unless given one, loading the CA certificates
(~40 ms of CPU), though the servers here speak plain HTTP on 127.0.0.1. These clients share
the process's context (``neta.tls_client_context``), as neta's model API clients do.
"""

from __future__ import annotations

import time
from typing import Any

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


def keep_alive_seconds(base: str, requests: int = 9, **options: Any) -> float:
    """The fastest of ``requests`` GETs of a missing path at ``base``, one after another on one
    keep-alive connection, the first left out: a few ms, unless the server holds back each
    answer's last piece until the client acknowledges the piece before it.

    Then every answer but the connection's first (acknowledged at once) waits for the client's
    delayed acknowledgement, ~40 ms on Linux. The fastest, not the median: on a busy machine
    some answers take 40 ms or more anyway, but not every one of them. ``options`` go to the
    client (``headers``: the server's token).
    """
    took = []
    with client(base_url=base, timeout=10, **options) as http:
        for _ in range(requests):
            started = time.monotonic()
            http.get("/v1/sessions/nope")
            took.append(time.monotonic() - started)
    return min(took[1:])
