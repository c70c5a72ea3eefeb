"""A worker's cluster loops outlive a call that fails in a way nobody foresaw.

If the loop reading this worker's inbox ended, every command another worker routes here (a
clarify answer, a cancel) would wait for a reply that never comes; if the loop reading the
session streams ended, this worker's clients would see no frame again.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from neta.hosting.cluster.bus import Command, LocalBus
from neta.hosting.cluster.cluster import Cluster
from tests.core.hosting.server_harness import scripted_hub


class FailsOnce(LocalBus):
    """An in-process bus whose first inbox read and first stream read fail unexpectedly."""

    def __init__(self) -> None:
        super().__init__()
        self.failed: set[str] = set()

    def _once(self, call: str) -> None:
        if call not in self.failed:
            self.failed.add(call)
            raise ValueError(f"a {call} nobody foresaw")

    async def receive(self, owner: str, timeout: float) -> Command | None:
        if owner != "tester":
            self._once("receive")
        return await super().receive(owner, timeout)

    async def read_many(self, after: Any, timeout: float, **options: Any) -> Any:
        self._once("read")
        return await super().read_many(after, timeout, **options)


class Collected:
    def __init__(self) -> None:
        self.frames: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def put(self, frame: dict[str, Any]) -> None:
        self.frames.put_nowait(frame)

    def close(self, code: int, reason: str) -> None:
        pass


def test_the_inbox_and_stream_loops_go_on_after_an_unforeseen_failure(
    tmp_path, caplog: pytest.LogCaptureFixture
) -> None:
    async def main() -> None:
        hub = scripted_hub(tmp_path)
        bus = FailsOnce()
        cluster = Cluster(hub, bus)
        cluster.start()
        try:
            # a command routed here is still carried out, and answered
            await bus.send(
                cluster.me,
                {"type": "cancel_run", "sessionId": "s1", "replyTo": "tester", "ticket": "t1"},
            )
            reply = await asyncio.wait_for(bus.receive("tester", 5), 5)
            assert reply is not None
            assert (reply["ticket"], reply["error"]["code"]) == ("t1", "not_running")
            # a followed session's frames still arrive
            collected = Collected()
            follower = cluster.follow("s1", collected, None)
            cluster.publish("s1", {"type": "pong", "sessionId": "s1", "data": {}})
            frame = await asyncio.wait_for(collected.frames.get(), 5)
            assert frame["type"] == "pong"
            follower.cancel()
        finally:
            await asyncio.wait_for(cluster.close(), 5)
            hub.store.close()

    with caplog.at_level(logging.ERROR, logger="neta.hosting"):
        asyncio.run(main())
    assert "a receive nobody foresaw" in caplog.text
    assert "a read nobody foresaw" in caplog.text


class CannotPublish(LocalBus):
    async def publish_many(self, items: Any) -> None:
        raise ValueError("a frame nobody can encode")


def test_a_loop_that_stops_anyway_is_logged_not_silent(
    tmp_path, caplog: pytest.LogCaptureFixture
) -> None:
    async def main() -> None:
        hub = scripted_hub(tmp_path)
        cluster = Cluster(hub, CannotPublish())
        cluster.start()
        cluster.publish("s1", {"type": "pong", "sessionId": "s1", "data": {}})
        await asyncio.sleep(0.2)
        await asyncio.wait_for(cluster.close(), 5)
        hub.store.close()

    with caplog.at_level(logging.ERROR, logger="neta.hosting"):
        asyncio.run(main())
    assert "neta-bus-publish stopped" in caplog.text
    assert "a frame nobody can encode" in caplog.text
