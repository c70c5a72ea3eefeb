"""Which runs are going is kept in the store, beside the session: Redis only carries frames.

Two ``neta serve`` workers share PostgreSQL and a Redis server of the test's own, which the
test pauses (SIGSTOP) or restarts. A run's end is saved in the same transaction that says it
is over, so a run that ended is never taken for one whose worker died; and a run whose worker
died is found whatever happened to Redis meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import http_clients
from tests.core.hosting.server_harness import ASK, drive, open_client
from tests.services import (
    SERVE_TOKEN,
    bearer,
    free_port,
    spawn_neta_serve,
    start_redis,
    stop_server,
    wait_until_serving,
)

LEASE_SECONDS = 1.5
SCENARIO_SECONDS = 90
pytestmark = pytest.mark.timeout(180)


class Worker:
    """One ``neta serve`` process on the shared store and bus."""

    def __init__(self, root: Path, name: str, environ: dict[str, str], turns: list[object]):
        lease = ("--lease-seconds", str(LEASE_SECONDS))
        self.proc, self.http, self.log = spawn_neta_serve(
            root, turns, *lease, name=name, environ=environ
        )

    def ws(self, **query: str) -> str:
        params = "&".join(f"{k}={v}" for k, v in {**query, "token": SERVE_TOKEN}.items())
        return self.http.replace("http://", "ws://", 1) + f"/ws?{params}"

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()


class Cluster:
    """A Redis server of the test's own, a new PostgreSQL database, and workers on them."""

    def __init__(self, root: Path, postgres_url: str) -> None:
        self.root = root
        self.port = free_port()
        self.redis = start_redis(self.port, str(root))
        self.env = {
            "NETA_REDIS_URL": f"redis://127.0.0.1:{self.port}/0",
            "NETA_DATABASE_URL": postgres_url,
        }
        self.workers: list[Worker] = []

    def start(self, *named: tuple[str, list[object]]) -> list[Worker]:
        """Start workers (at once), each ``(name, turns)``; once they all serve."""
        started = [Worker(self.root, name, self.env, turns) for name, turns in named]
        self.workers += started
        for worker in started:
            wait_until_serving(worker.http, worker.proc, worker.log)
        return started

    def restart_redis(self) -> None:
        """Stop Redis and start it again, empty: every stream, inbox and key is gone."""
        stop_server(self.redis)
        self.redis = start_redis(self.port, str(self.root))

    def pause_redis(self) -> None:
        os.kill(self.redis.pid, signal.SIGSTOP)

    def resume_redis(self) -> None:
        os.kill(self.redis.pid, signal.SIGCONT)

    async def published(self, session_id: str, kind: str) -> None:
        """Wait until a frame of ``kind`` of the session is on the bus."""
        import redis.asyncio as aioredis

        client = aioredis.Redis.from_url(self.env["NETA_REDIS_URL"])
        try:
            while True:
                entries = await client.xrange(f"neta:events:{session_id}")
                if any(kind.encode() in fields[b"f"] for _, fields in entries):
                    return
                await asyncio.sleep(0.02)
        finally:
            await client.aclose()

    def stop(self) -> None:
        self.resume_redis()
        for worker in self.workers:
            worker.stop()
        stop_server(self.redis)
        for worker in self.workers:  # shown if the test fails
            print(f"--- {worker.log.name} ---\n{worker.log.read_text(errors='replace')}")


@pytest.fixture
def cluster(tmp_path: Path, postgres_url: str) -> Iterator[Cluster]:
    running = Cluster(tmp_path, postgres_url)
    yield running
    running.stop()


async def saved(worker: Worker, session_id: str) -> list[tuple[str, str | None]]:
    async with http_clients.async_client(headers=bearer(), timeout=30) as http:
        reply = await http.get(f"{worker.http}/v1/sessions/{session_id}")
    return [(m["role"], m.get("content")) for m in reply.json()["messages"]]


def test_a_run_that_ended_before_its_worker_died_is_never_reported_interrupted(cluster):
    # every session's first turn: a question, after two seconds of thought
    a, b = cluster.start(("a", [{**ASK, "delay": 2}]), ("b", []))

    async def scenario() -> tuple[str, dict[str, object]]:
        # a run still going on A when A dies, waiting for an answer: a client of A asked, one
        # of B follows
        on_a, ready = await open_client(a.ws())
        going = ready["sessionId"]
        on_b, _ = await open_client(b.ws(sessionId=going))
        await on_a.send("user_message", going, text="paint it")
        await on_b.until("clarify_request")
        async with http_clients.async_client(headers=bearer(), timeout=60) as http:
            # a REST run on A (a question ends it: REST has no live channel) ends while the
            # bus cannot be reached, so A never tells the bus its run is over, and A dies
            ended = (await http.post(f"{a.http}/v1/sessions")).json()["sessionId"]
            message = asyncio.create_task(
                http.post(f"{a.http}/v1/sessions/{ended}/messages", json={"text": "paint it"})
            )
            await cluster.published(ended, "run_started")
            cluster.pause_redis()
            try:
                reply = await message
                assert (reply.status_code, reply.json()["outcome"]) == (200, "awaiting_input")
                a.kill()
            finally:
                cluster.resume_redis()
        finished = await on_b.until("run_finished", timeout=LEASE_SECONDS * 8 + 10)
        await asyncio.sleep(LEASE_SECONDS * 2)  # a few more heartbeats of B
        return ended, finished["data"]

    ended, finished = drive(scenario(), timeout=SCENARIO_SECONDS)
    assert finished["outcome"] == "interrupted"
    history = drive(saved(b, ended))
    assert [role for role, _ in history] == ["user", "assistant", "tool"]
    assert not any("[interrupted]" in (content or "") for _, content in history)


def test_a_run_whose_worker_dies_after_redis_restarted_still_ends_for_the_other_workers_client(
    cluster,
):
    a, b = cluster.start(("a", [{"text": "too late", "delay": 60}]), ("b", []))

    async def scenario() -> dict[str, object]:
        on_a, ready = await open_client(a.ws())
        sid = ready["sessionId"]
        on_b, _ = await open_client(b.ws(sessionId=sid))
        await on_a.send("user_message", sid, text="think hard")
        await on_b.until("run_started")
        cluster.restart_redis()  # what the bus knew is gone
        a.kill()
        finished = await on_b.until("run_finished", timeout=LEASE_SECONDS * 8 + 10)
        with contextlib.suppress(Exception):
            await on_a.ws.close()
        return dict(finished["data"])

    finished = drive(scenario(), timeout=SCENARIO_SECONDS)
    assert finished["outcome"] == "interrupted"
    assert "stopped" in str(finished["reason"])
