"""A PostgreSQL server restarting under a host: the pooled connections it broke are replaced.

The tests share one PostgreSQL cluster of their own (they restart it), each on a new database.
"""

from __future__ import annotations

import asyncio

import pytest

from neta.errors import StorageUnavailable
from neta.hosting.store import StoredQuestion
from neta.hosting.store.postgres import PostgresStore
from neta.messages import Message
from tests import http_clients
from tests.core.hosting.server_harness import ASK, drive, open_client
from tests.services import PostgresCluster, new_database


@pytest.fixture(scope="module")
def cluster():
    """A PostgreSQL cluster these tests restart."""
    running = PostgresCluster()
    yield running
    running.remove()


@pytest.fixture
def restartable(cluster):
    """A new database's URL, and a function that restarts its server (fast shutdown)."""

    def restart() -> None:
        cluster.stop()
        cluster.start()

    return new_database(cluster.url), restart


def _said(*texts: str) -> list[Message]:
    return [Message(role="user", content=text) for text in texts]


def test_run_calls_after_a_restart_are_made_on_fresh_connections(restartable):
    url, restart = restartable
    store = PostgresStore(url)
    sessions = [f"s{n}" for n in range(8)]

    async def main() -> None:
        calls = store.run_calls()
        try:
            for sid in sessions:
                await calls.create(sid, "gateway")
            # at once: the pool opens several connections, and keeps them
            await asyncio.gather(*(calls.acquire(sid, "me", 60) for sid in sessions))
            await asyncio.gather(*(calls.save(sid, _said("one"), owner="me") for sid in sessions))
            restart()  # every pooled connection is broken now
            saved = await asyncio.gather(
                *(calls.save(sid, _said("two"), owner="me", start=1) for sid in sessions)
            )
            assert all(version >= 2 for version in saved)
            for sid in sessions:
                loaded = await calls.load(sid)
                assert loaded is not None
                assert [m.content for m in loaded.history] == ["one", "two"]
        finally:
            await calls.close()

    try:
        asyncio.run(main())
    finally:
        store.close()


def test_the_blocking_store_after_a_restart_uses_fresh_connections(restartable):
    url, restart = restartable
    store = PostgresStore(url)
    try:
        store.create("s1", "gateway")
        assert store.acquire("s1", "me", 60)
        restart()
        assert store.acquire("s1", "me", 60)
        store.save("s1", _said("after"), owner="me")
        assert [m.content for m in store.load("s1").history] == ["after"]
    finally:
        store.close()


def test_a_save_made_twice_leaves_the_session_as_one_did(restartable):
    """What a save's second try after a lost acknowledgement does: the same rows again."""
    url, _ = restartable
    store = PostgresStore(url)
    try:
        store.create("s1", "gateway")
        store.acquire("s1", "me", 60)
        store.save("s1", _said("a", "b", "c"), owner="me", todos='{"items": []}')
        for _ in range(2):
            version = store.save("s1", _said("B"), owner="me", start=1, todos='{"items": [1]}')
        loaded = store.load("s1")
        assert [m.content for m in loaded.history] == ["a", "B"]
        assert (loaded.todos, loaded.version) == ('{"items": [1]}', version)
    finally:
        store.close()


def test_a_call_unsafe_to_make_twice_fails_once_after_a_restart_and_then_works(restartable):
    url, restart = restartable
    store = PostgresStore(url)

    async def main() -> None:
        calls = store.run_calls()
        try:
            await calls.create("s1", "gateway")
            await calls.add_question(StoredQuestion("r1", "s1", "Which?", None))
            restart()
            # taking questions (they are gone once taken) is not made twice
            with pytest.raises(StorageUnavailable):
                await calls.lose_questions(["r1"])
            assert [q.request_id for q in await calls.lose_questions(["r1"])] == ["r1"]
        finally:
            await calls.close()

    try:
        asyncio.run(main())
    finally:
        store.close()


def test_runs_and_requests_in_flight_go_on_after_the_database_restarts(serve, restartable):
    url, restart = restartable
    server = serve([ASK, {"text": "blue it is"}], database_url=url)

    async def scenario() -> list[str]:
        async with http_clients.async_client(base_url=server.http, timeout=30) as http:
            waiting = []  # runs waiting for their user's answer
            for _ in range(4):
                client, ready = await open_client(server.ws_url())
                sid = ready["data"]["sessionId"]
                await client.send("user_message", sid, text="pick a colour")
                waiting.append((client, sid))
            asked = [(await c.until("clarify_request"))["data"]["requestId"] for c, _ in waiting]
            rest = [(await http.post("/v1/sessions")).json()["sessionId"] for _ in range(4)]
            restart()
            replies = await asyncio.gather(
                *(http.post(f"/v1/sessions/{sid}/messages", json={"text": "hi"}) for sid in rest)
            )
            assert [(r.status_code, r.json()["outcome"]) for r in replies] == [
                (200, "awaiting_input")
            ] * 4
            for (client, sid), rid in zip(waiting, asked, strict=True):
                await client.send("clarify_response", sid, requestId=rid, answer="blue")
            for client, _ in waiting:
                finished = (await client.until("run_finished"))["data"]
                assert (finished["outcome"], finished["text"]) == ("completed", "blue it is")
            for _, sid in waiting:
                saved = (await http.get(f"/v1/sessions/{sid}")).json()["messages"]
                assert [m["role"] for m in saved] == ["user", "assistant", "tool", "assistant"]
                assert saved[0]["content"] == "pick a colour"
        return [sid for _, sid in waiting]

    answered = drive(scenario(), timeout=60)
    store = PostgresStore(url)
    try:  # an answered question is forgotten (else a later start would note it as lost)
        assert [store.pending_questions(sid) for sid in answered] == [[]] * 4
    finally:
        store.close()
