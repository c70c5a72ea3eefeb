"""What a run costs a worker on Redis and PostgreSQL, in round trips: a guard against more.

Each round trip to the database or the bus costs the worker CPU, whatever it carries (the
bench, ``bench/gateway_bench.py --engines``, prints the CPU). A run of many at once shares its
statements and its publishes with the others: these tests count them, at the client libraries.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import psycopg
import pytest
import redis.asyncio

from tests.core.hosting.server_harness import ASK, drive, open_client

SESSIONS = 40


@pytest.fixture
def trips(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts of the statements sent to PostgreSQL and the commands sent to Redis."""
    counted: Counter[str] = Counter()

    def counting(kind: str, call: Any) -> Any:
        async def count(*args: Any, **kwargs: Any) -> Any:
            counted[kind] += 1
            return await call(*args, **kwargs)

        return count

    monkeypatch.setattr(
        psycopg.AsyncConnection, "execute", counting("sql", psycopg.AsyncConnection.execute)
    )
    monkeypatch.setattr(
        redis.asyncio.Redis,
        "execute_command",
        counting("redis", redis.asyncio.Redis.execute_command),
    )
    return counted


def test_runs_at_once_share_their_statements_and_publishes(serve, redis_url, postgres_url, trips):
    server = serve([ASK, {"text": "done"}], redis_url=redis_url, database_url=postgres_url)

    async def one() -> None:
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="go")
        asked = await client.until("clarify_request")
        await client.send("clarify_response", sid, requestId=asked["data"]["requestId"], answer="y")
        assert (await client.until("run_finished"))["data"]["outcome"] == "completed"
        await client.ws.close()

    async def scenario() -> None:
        await one()  # the pools' connections are open, the statements prepared
        trips.clear()
        await asyncio.gather(*(one() for _ in range(SESSIONS)))
        await asyncio.sleep(0.5)  # the sessions' leases are given up as their clients leave

    drive(scenario(), timeout=60)
    per_run = {kind: trips[kind] / SESSIONS for kind in ("sql", "redis")}
    # at once (here 2.5 statements and 1 Redis command per run), most of them go together
    assert per_run["sql"] <= 6, per_run  # 11 when each was made alone
    assert per_run["redis"] <= 2.5, per_run  # 3.5 when each worker read its own frames back
