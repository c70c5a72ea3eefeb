"""What the benches that start servers share: a free loopback port, and waiting for one to open.

The benches run as scripts (``python bench/NAME.py``), so this folder is on their import path.
"""

from __future__ import annotations

import socket
import subprocess
import time


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(port: int, process: subprocess.Popen[bytes], seconds: float = 30) -> None:
    """Wait until ``process`` accepts connections on ``port``; exit the bench if it never does."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise SystemExit(f"a server did not start on port {port}") from None
            time.sleep(0.1)
