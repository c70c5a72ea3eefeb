"""``LoopbackServer``: an HTTP server on a free 127.0.0.1 port, served from a daemon thread.

The fake model APIs (``fake_openai``, ``fake_anthropic``) run on it; each brings its handler.
"""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _PromptHTTPServer(ThreadingHTTPServer):
    """Sends on each connection at once (``TCP_NODELAY``), as production HTTP servers do: a
    handler writes an answer's headers and body apart, and the body would otherwise wait for
    the client's delayed acknowledgement of the headers (~40 ms on Linux)."""

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, address = super().get_request()
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address


class LoopbackServer:
    """Serves ``handler`` between ``start`` and ``stop``."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = _PromptHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def root(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        """Start serving."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
