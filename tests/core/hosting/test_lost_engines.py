"""A store or bus that cannot be reached: ``neta serve`` refuses to start, a run tells its clients.

Real servers: a ``neta serve`` process for the start, a Redis server stopped (and started
again) by the test while a session's run goes on.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from neta.hosting.clarify_bridge import TIMEOUT_TEXT
from tests.core.hosting.server_harness import ASK, drive, open_client
from tests.services import free_port, spawn_neta_serve, start_redis, stop_server


def refused_start(root: Path, environ: dict[str, str], *options: str) -> list[str]:
    """Start ``neta serve`` with ``environ``; the lines it printed, once it exited with 2."""
    proc, _, log = spawn_neta_serve(root, [{"text": "unused"}], *options, environ=environ)
    try:
        code = proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"neta serve started:\n{log.read_text()}") from None
    lines = log.read_text().splitlines()
    assert code == 2, lines
    return [line for line in lines if not line.startswith("Warning:")]


def test_serve_refuses_to_start_when_its_redis_cannot_be_reached(tmp_path):
    url = f"redis://:s3cret@127.0.0.1:{free_port()}/0"
    for options in ((), ("--workers", "2")):
        [line] = refused_start(tmp_path, {"NETA_REDIS_URL": url}, *options)
        masked = url.replace(":s3cret@", ":***@")
        assert line.startswith(f"Error: Redis: the bus cannot reach {masked}: ")
        assert "refused" in line
        assert "s3cret" not in line


def test_serve_refuses_to_start_when_its_database_cannot_be_reached(tmp_path):
    url = f"postgresql://neta:s3cret@127.0.0.1:{free_port()}/neta"
    [line] = refused_start(tmp_path, {"NETA_DATABASE_URL": url})
    masked = url.replace(":s3cret@", ":***@")
    assert line.startswith(f"Error: PostgreSQL: the session store cannot open {masked}: ")
    assert "refused" in line
    assert "s3cret" not in line


def test_serve_refuses_to_start_on_a_database_that_does_not_exist(
    tmp_path, postgres_server, redis_url
):
    url = f"{postgres_server}/no_such_database"
    environ = {"NETA_DATABASE_URL": url, "NETA_REDIS_URL": redis_url}
    [line] = refused_start(tmp_path, environ, "--workers", "2")
    assert line.startswith(f"Error: PostgreSQL: the session store cannot open {url}: ")
    assert '"no_such_database" does not exist' in line


@pytest.fixture
def own_redis(tmp_path):
    """A Redis server of this test's own, to stop and start: its port and its (re)starter."""
    port = free_port()
    running: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        running.append(start_redis(port, str(tmp_path)))

    start()
    yield port, start, running
    for proc in running:
        stop_server(proc)


def test_a_question_the_bus_cannot_carry_stops_the_run_and_its_client_is_told(
    serve, own_redis, postgres_url
):
    port, start_again, running = own_redis
    server = serve(
        [ASK, {"text": "blue it is"}],
        redis_url=f"redis://127.0.0.1:{port}/0",
        database_url=postgres_url,
        clarify_timeout=1.0,  # were the question left waiting, the model would soon decide
    )

    async def scenario() -> None:
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        stop_server(running.pop())
        await client.send("user_message", sid, text="pick a colour")
        told = await client.until("error", timeout=20)
        assert told["data"]["code"] == "storage_unavailable"
        assert "bus" in told["data"]["message"]
        assert "eventId" not in told  # straight to the client, not through the bus
        await asyncio.sleep(2.0)  # past the question's timeout: the run must not have gone on
        start_again()
        finished = await client.until("run_finished", timeout=20)
        assert finished["data"]["outcome"] == "error"
        history = (await server.hub.view(sid)).history
        assert [m.role for m in history] == ["user", "assistant"]  # asked; never answered
        assert all(TIMEOUT_TEXT not in str(m.content) for m in history)
        # the bus is back: the session goes on
        await client.send("user_message", sid, text="blue")
        again = await client.until("run_finished", timeout=20)
        assert (again["data"]["outcome"], again["data"]["text"]) == ("completed", "blue it is")

    drive(scenario(), timeout=90)
