"""How ``neta serve --workers N`` hands its settings (the token, the API key) to its workers.

The settings are what the command line gave, as JSON (the permission rules as their text,
``{"mode", "allow", "ask", "deny"}``): each worker builds its app from them.

Not in the environment: a command a model runs in a worker inherits that. The supervisor
hands them out on a local socket in a private directory (mode 0700, removed at exit), and
answers only a process proving it holds the supervisor's multiprocessing key. Its workers
hold that key (multiprocessing gives it to the processes it spawns, on the pipe that starts
them); the commands they run do not. A worker uvicorn starts again after one died gets them
the same way. The socket's address travels in ``ADDRESS_VARIABLE``: it is no secret.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
from multiprocessing.connection import Client, Listener
from typing import Any

ADDRESS_VARIABLE = "NETA_SERVE_SETTINGS_ADDRESS"
"""The environment variable giving workers the address to fetch their settings from."""


class SettingsHandout:
    """Hands ``settings`` to every worker that asks, until closed (use it as a context manager).

    Args:
        settings: what a worker needs to build its app (JSON-serialisable).
    """

    def __init__(self, settings: dict[str, Any]) -> None:
        self._payload = json.dumps(settings).encode()
        self._listener = Listener(authkey=bytes(multiprocessing.current_process().authkey))
        self.address: str = str(self._listener.address)
        """Where workers connect (a Unix socket in a private temporary directory)."""
        self._closed = False
        threading.Thread(target=self._serve, name="neta-worker-settings", daemon=True).start()

    def _serve(self) -> None:
        while not self._closed:
            try:
                with self._listener.accept() as connection:
                    connection.send_bytes(self._payload)
            except (OSError, EOFError, multiprocessing.AuthenticationError):
                continue  # a process without the key, or a worker gone mid-way: the next one

    def close(self) -> None:
        """Stop handing the settings out and remove the socket."""
        self._closed = True
        self._listener.close()

    def __enter__(self) -> SettingsHandout:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def receive_settings() -> dict[str, Any]:
    """The settings the supervisor hands out, in one of its worker processes."""
    authkey = bytes(multiprocessing.current_process().authkey)
    with Client(os.environ[ADDRESS_VARIABLE], authkey=authkey) as connection:
        settings: dict[str, Any] = json.loads(connection.recv_bytes())
    return settings
