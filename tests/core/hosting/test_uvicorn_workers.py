"""``neta serve --workers N``: uvicorn's worker processes behind one port, sharing a bus.

Kept apart from ``test_workers.py``, whose pair of workers needs PostgreSQL: this needs only
Redis, so the two modules can run on different test workers.
"""

from __future__ import annotations

import signal

from tests import http_clients
from tests.core.cli.cli_runner import run_neta
from tests.services import start_neta_serve


def test_serve_refuses_several_workers_without_a_shared_bus(capsys, monkeypatch):
    monkeypatch.delenv("NETA_REDIS_URL", raising=False)
    done = run_neta(capsys, "serve", "--workers", "2", "-p", "scripted")
    assert done.code == 2
    assert "--workers 2 needs a shared bus: set NETA_REDIS_URL" in done.stderr


def test_serve_with_two_uvicorn_workers_shares_redis_and_sqlite(tmp_path, redis_url):
    proc, base = start_neta_serve(
        tmp_path,
        [{"text": "from a worker"}],
        "--workers",
        "2",
        environ={"NETA_REDIS_URL": redis_url},
    )
    try:
        sid = http_clients.post(f"{base}/v1/sessions").json()["sessionId"]
        reply = http_clients.post(
            f"{base}/v1/sessions/{sid}/messages", json={"text": "hi"}, timeout=30
        )
        assert reply.json()["reply"] == "from a worker"
        # uvicorn's listening socket for several workers does not name TCP: without neta
        # setting TCP_NODELAY, each answer waited for the client's delayed acknowledgement
        assert http_clients.keep_alive_seconds(base) < 0.035
        printed = (tmp_path / "serve.log").read_text()
        assert f"store: SQLite {tmp_path / 'home' / 'neta.db'}; bus: Redis" in printed
        assert "workers: 2" in printed
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(20)
