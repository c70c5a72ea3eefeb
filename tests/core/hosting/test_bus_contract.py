"""The ``Bus`` contract, held by the in-process bus and the Redis bus alike.

Two ``RedisBus`` objects on one server stand for two workers; the in-process bus is shared by
the "workers" of one process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from neta.errors import ConfigError, StorageUnavailable
from neta.hosting.cluster.bus import Bus, LocalBus
from neta.hosting.cluster.redis_bus import RedisBus
from neta.hosting.engines import open_bus
from tests.services import free_port

TwoWorkers = Callable[[Callable[[Bus, Bus], Awaitable[Any]]], Any]


@pytest.fixture(params=["local", "redis"])
def two_workers(request: pytest.FixtureRequest) -> TwoWorkers:
    """Runs a coroutine with the buses of two workers of one host."""
    url = request.getfixturevalue("redis_url") if request.param == "redis" else None

    def run(body: Callable[[Bus, Bus], Awaitable[Any]]) -> Any:
        async def main() -> Any:
            if url is None:
                shared = LocalBus(keep_events=50)
                first, second = shared, shared
            else:
                first, second = RedisBus(url, keep_events=50), RedisBus(url, keep_events=50)
            try:
                return await body(first, second)
            finally:
                await first.close()
                await second.close()

        return asyncio.run(main())

    return run


def test_events_of_a_run_on_one_worker_reach_a_client_on_another_in_order(two_workers):
    async def body(owner: Bus, other: Bus) -> None:
        assert await other.last_id("s1") is None
        reader = asyncio.create_task(other.read("s1", None, 5))
        await asyncio.sleep(0.05)
        first = await owner.publish("s1", {"type": "event", "n": 0})
        got = await reader
        assert got == [(first, {"type": "event", "n": 0})]
        ids = [await owner.publish("s1", {"type": "event", "n": n}) for n in range(1, 20)]
        seen = await other.read("s1", first, 1)
        assert [frame["n"] for _, frame in seen] == list(range(1, 20))
        assert [event_id for event_id, _ in seen] == ids
        assert await other.last_id("s1") == ids[-1]
        assert await other.read("s1", ids[-1], 0.05) == []  # nothing new: waits, then none

    two_workers(body)


def test_a_client_reconnecting_with_its_last_id_misses_nothing_and_repeats_nothing(two_workers):
    async def body(owner: Bus, other: Bus) -> None:
        ids = [await owner.publish("s1", {"n": n}) for n in range(10)]
        before = await other.read("s1", None, 0)
        assert [f["n"] for _, f in before] == list(range(10))
        last_seen = ids[4]  # the client dropped after the fifth frame
        for n in range(10, 15):
            await owner.publish("s1", {"n": n})
        resumed = await other.read("s1", last_seen, 0)
        assert [f["n"] for _, f in resumed] == list(range(5, 15))
        assert await other.read("s2", None, 0) == []  # streams are per session

    two_workers(body)


def test_a_stream_keeps_its_newest_frames(two_workers):
    async def body(owner: Bus, other: Bus) -> None:
        for n in range(300):
            await owner.publish("s1", {"n": n})
        kept = [f["n"] for _, f in await other.read("s1", None, 0)]
        assert kept[-1] == 299
        assert kept == list(range(kept[0], 300))  # a contiguous tail
        assert 50 <= len(kept) < 300

    two_workers(body)


def test_commands_reach_the_owner_they_are_sent_to_in_order(two_workers):
    async def body(a: Bus, b: Bus) -> None:
        waiting = asyncio.create_task(a.receive("A", 5))
        await asyncio.sleep(0.05)
        await b.send("A", {"type": "clarify_response", "answer": "red"})
        assert await waiting == {"type": "clarify_response", "answer": "red"}
        await b.send("A", {"type": "cancel_run", "n": 1})
        await b.send("B", {"type": "cancel_run", "n": 2})
        await b.send("A", {"type": "cancel_run", "n": 3})
        assert (await a.receive("A", 1))["n"] == 1
        assert (await a.receive("A", 1))["n"] == 3
        assert await a.receive("A", 0.05) is None
        assert (await b.receive("B", 1))["n"] == 2

    two_workers(body)


def test_an_unreachable_redis_is_storage_unavailable_without_the_password():
    async def body() -> None:
        bus = RedisBus(f"redis://:s3cret@127.0.0.1:{free_port()}/0")
        try:
            with pytest.raises(StorageUnavailable) as caught:
                await bus.publish("s1", {})
            assert "s3cret" not in str(caught.value)
            assert "s3cret" not in bus.name
        finally:
            await bus.close()

    asyncio.run(body())


def test_bus_urls_choose_the_engine():
    assert open_bus(None).name == "in-process"
    with pytest.raises(ConfigError, match="redis://"):
        open_bus("amqp://localhost")


def test_one_read_follows_many_sessions_each_in_order(two_workers):
    async def body(owner: Bus, other: Bus) -> None:
        first = await owner.publish("s1", {"n": 0})
        waiting = asyncio.create_task(other.read_many({"s1": first, "s2": None}, 5))
        await asyncio.sleep(0.05)
        await owner.publish("s2", {"n": 1})
        got = await waiting
        assert [(sid, f["n"]) for sid, _, f in got] == [("s2", 1)]
        for n in range(2, 6):
            await owner.publish(("s1", "s2")[n % 2], {"n": n})
        got = await other.read_many({"s1": first, "s2": None}, 0)
        by_session = {sid: [f["n"] for s, _, f in got if s == sid] for sid in ("s1", "s2")}
        assert by_session == {"s1": [2, 4], "s2": [1, 3, 5]}
        assert await other.read_many({}, 0) == []

    two_workers(body)


def test_a_batch_is_published_in_order(two_workers):
    async def body(owner: Bus, other: Bus) -> None:
        await owner.publish_many([(("s1", "s2")[n % 2], {"n": n}) for n in range(6)])
        assert [f["n"] for _, f in await other.read("s1", None, 0)] == [0, 2, 4]
        assert [f["n"] for _, f in await other.read("s2", None, 0)] == [1, 3, 5]

    two_workers(body)


def test_a_read_of_followed_sessions_sees_theirs_among_many_others(two_workers):
    async def body(owner: Bus, other: Bus) -> None:
        await owner.publish("old", {"n": 0})  # published before anyone followed it
        assert [f["n"] for _, _, f in await other.read_many({"old": None}, 1)] == [0]
        follow = {"old": None, "mine": None}
        waiting = asyncio.create_task(other.read_many(follow, 5))
        await asyncio.sleep(0.05)
        await owner.publish_many([(f"else-{n}", {"n": n}) for n in range(50)])
        await owner.publish("mine", {"n": "x"})
        got: list[tuple[str, str, Any]] = []
        while not got:  # frames of other sessions may end a read early, empty
            got = [item for item in await waiting if item[0] == "mine"]
            waiting = asyncio.create_task(other.read_many(follow, 5))
        waiting.cancel()
        assert [(sid, f["n"]) for sid, _, f in got] == [("mine", "x")]

    two_workers(body)


def test_a_batch_says_the_id_before_each_frame_in_its_stream(two_workers):
    async def body(owner: Bus, other: Bus) -> None:
        first = await other.publish("s1", {"n": 0})
        published = await owner.publish_many([("s1", {"n": 1}), ("s2", {"n": 2}), ("s1", {"n": 3})])
        ids = [event_id for event_id, _ in await owner.read("s1", None, 0)]
        assert ids == [first, published[0][1], published[2][1]]
        assert [before for before, _ in published] == [first, None, published[0][1]]

    two_workers(body)


def test_a_read_may_skip_what_its_bus_published_but_never_what_another_did(two_workers):
    async def body(owner: Bus, other: Bus) -> None:
        follow: dict[str, str | None] = {"s1": None}
        assert await owner.read_many(follow, 0, skip_own=True) == []  # followed from now on
        await owner.publish("s1", {"by": "owner"})
        await other.publish("s1", {"by": "other"})
        got = await owner.read_many(follow, 1, skip_own=True)
        assert [f["by"] for _, _, f in got][-1] == "other"

    two_workers(body)
