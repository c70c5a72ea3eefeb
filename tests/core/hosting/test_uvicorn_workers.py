"""``neta serve --workers N``: uvicorn's worker processes behind one port, sharing a bus.

Kept apart from ``test_workers.py``, whose pair of workers needs PostgreSQL: this needs only
Redis, so the two modules can run on different test workers.
"""

from __future__ import annotations

import multiprocessing
import os
import secrets
import signal
from multiprocessing.connection import Client
from pathlib import Path

import pytest

from neta.cli.worker_settings import ADDRESS_VARIABLE
from tests import http_clients
from tests.core.cli.cli_runner import run_neta
from tests.processes import (
    becomes_undumpable,
    observable_group,
    pool_workers,
    undumpable,
    wait_gone,
)
from tests.services import bearer, start_neta_serve


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
        sid = http_clients.post(f"{base}/v1/sessions", headers=bearer()).json()["sessionId"]
        reply = http_clients.post(
            f"{base}/v1/sessions/{sid}/messages",
            json={"text": "hi"},
            headers=bearer(),
            timeout=30,
        )
        assert reply.json()["reply"] == "from a worker"
        # uvicorn's listening socket for several workers does not name TCP: without neta
        # setting TCP_NODELAY, each answer waited for the client's delayed acknowledgement
        held_back = http_clients.held_back_seconds(base, headers=bearer())
        assert held_back < http_clients.DELAYED_ACK_SECONDS / 2
        printed = (tmp_path / "serve.log").read_text()
        assert f"store: SQLite {tmp_path / 'home' / 'neta.db'}; bus: Redis" in printed
        assert "workers: 2" in printed
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(20)


def test_serve_workers_get_their_settings_from_the_supervisor_not_the_environment(
    tmp_path, redis_url
):
    # a command a model runs in a worker inherits its environment: the token and the API key
    # must not be in it, nor anywhere a process of the same user can read them
    token, key = f"token-{secrets.token_hex(8)}", f"key-{secrets.token_hex(8)}"
    proc, base = start_neta_serve(
        tmp_path,
        [{"text": "from a worker"}],
        "--workers", "2", "--api-key", key,
        environ={"NETA_REDIS_URL": redis_url},
        token=token,
        group=observable_group(),
    )  # fmt: skip
    try:
        workers = pool_workers(proc.pid, 2)
        assert http_clients.get(f"{base}/v1/sessions/nope").status_code == 401
        assert (
            http_clients.get(f"{base}/v1/sessions/nope", headers=bearer(token)).status_code == 404
        )
        if os.geteuid() == 0:  # else the workers are undumpable: this process cannot read them
            environs = [Path(f"/proc/{pid}/environ").read_bytes() for pid in workers]
            for environ in environs:
                assert token.encode() not in environ
                assert key.encode() not in environ
            # where a worker fetches its settings, a process without the supervisor's key is
            # asked for it and given nothing else, and one with a wrong key is refused
            variables = dict(v.split(b"=", 1) for v in environs[0].split(b"\0") if b"=" in v)
            address = variables[ADDRESS_VARIABLE.encode()].decode()
            with Client(address) as keyless:
                assert token.encode() not in keyless.recv_bytes()
            with pytest.raises(multiprocessing.AuthenticationError):
                Client(address, authkey=os.urandom(32))
        assert undumpable(proc.pid)
        for pid in workers:  # as they start: one may still be starting
            assert becomes_undumpable(pid)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(20)


def test_serve_replaces_a_dead_worker_with_one_that_has_the_same_settings(tmp_path, redis_url):
    proc, base = start_neta_serve(
        tmp_path,
        [{"text": "from a replacement"}],
        "--workers", "2",
        environ={"NETA_REDIS_URL": redis_url},
    )  # fmt: skip
    try:
        first = pool_workers(proc.pid, 2)
        for pid in first:  # one at a time, as crashes come
            os.kill(pid, signal.SIGKILL)
            assert wait_gone([pid]) == []
        # only replacements are left to answer: they serve, and want the token
        with http_clients.client(base_url=base, timeout=60) as http:
            assert http.get("/v1/sessions/nope").status_code == 401
            sid = http.post("/v1/sessions", headers=bearer()).json()["sessionId"]
            reply = http.post(f"/v1/sessions/{sid}/messages", json={"text": "hi"}, headers=bearer())
        assert reply.json()["reply"] == "from a replacement"
        assert set(pool_workers(proc.pid, 2)).isdisjoint(first)
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(20)
