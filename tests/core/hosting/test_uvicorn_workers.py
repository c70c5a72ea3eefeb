"""``neta serve --workers N``: uvicorn's worker processes behind one port, sharing a bus.

Kept apart from ``test_workers.py``, whose pair of workers needs PostgreSQL: this needs only
Redis, so the two modules can run on different test workers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests import http_clients
from tests.core.cli.cli_runner import run_neta
from tests.services import free_port, wait_until_serving


def _serve_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NETA_", "OPENAI_"))}
    return {**env, "NETA_HOME": str(tmp_path / "home"), **extra}


def test_serve_refuses_several_workers_without_a_shared_bus(capsys, monkeypatch):
    monkeypatch.delenv("NETA_REDIS_URL", raising=False)
    done = run_neta(capsys, "serve", "--workers", "2", "-p", "scripted")
    assert done.code == 2
    assert "--workers 2 needs a shared bus: set NETA_REDIS_URL" in done.stderr


def test_serve_with_two_uvicorn_workers_shares_redis_and_sqlite(tmp_path, redis_url):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "from a worker"}]}))
    port = free_port()
    log_path = tmp_path / "serve.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "neta",
                "serve",
                "--workers",
                "2",
                "--port",
                str(port),
                "-p",
                "scripted",
                "--script",
                str(script),
                "-w",
                str(tmp_path),
            ],
            env=_serve_env(tmp_path, NETA_REDIS_URL=redis_url),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_serving(base, proc, log_path)
        sid = http_clients.post(f"{base}/v1/sessions").json()["sessionId"]
        reply = http_clients.post(
            f"{base}/v1/sessions/{sid}/messages", json={"text": "hi"}, timeout=30
        )
        assert reply.json()["reply"] == "from a worker"
        # uvicorn's listening socket for several workers does not name TCP: without neta
        # setting TCP_NODELAY, each answer waited for the client's delayed acknowledgement
        assert http_clients.keep_alive_seconds(base) < 0.035
        printed = log_path.read_text()
        assert f"store: SQLite {tmp_path / 'home' / 'neta.db'}; bus: Redis" in printed
        assert "workers: 2" in printed
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(20)
