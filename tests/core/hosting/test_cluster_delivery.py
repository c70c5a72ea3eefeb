"""A worker hands the frames it publishes to its own clients, never skipping another's frame.

Two clusters on one real Redis stand for two workers publishing to the same session (as around
a takeover): a client of the first gets every frame of the stream once, in the stream's order,
whichever worker published it and however their publishes interleave.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from neta.hosting.cluster.cluster import Cluster
from neta.hosting.cluster.redis_bus import RedisBus
from tests.core.hosting.server_harness import scripted_hub


class Collected:
    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    def put(self, frame: dict[str, Any]) -> None:
        self.frames.append(frame)

    def close(self, code: int, reason: str) -> None:
        pass


def test_a_client_gets_every_frame_of_both_workers_once_in_the_streams_order(
    tmp_path: Path, redis_url: str
) -> None:
    async def main() -> None:
        hubs = [scripted_hub(tmp_path / name) for name in ("a", "b")]
        buses = [RedisBus(redis_url), RedisBus(redis_url)]
        a, b = (Cluster(hub, bus) for hub, bus in zip(hubs, buses, strict=True))
        for cluster in (a, b):
            cluster.start()
        client = Collected()
        follower = a.follow("s1", client, None)
        try:
            sent = 0
            for round_ in range(30):  # bursts of each, published at once
                for n in range(round_ % 4):
                    a.publish("s1", {"n": sent + n, "by": "a"})
                sent += round_ % 4
                for n in range(round_ % 3):
                    b.publish("s1", {"n": sent + n, "by": "b"})
                sent += round_ % 3
                await asyncio.sleep(0)
            stream = await buses[0].read("s1", None, 0)
            while len(client.frames) < len(stream) or len(stream) < sent:
                await asyncio.sleep(0.02)
                stream = await buses[0].read("s1", None, 0)
            assert [f["eventId"] for f in client.frames] == [event_id for event_id, _ in stream]
            assert [f["n"] for f in client.frames] == [frame["n"] for _, frame in stream]
            assert {f["by"] for f in client.frames} == {"a", "b"}
        finally:
            follower.cancel()
            for cluster in (a, b):
                await asyncio.wait_for(cluster.close(), 5)
            for hub in hubs:
                hub.store.close()

    asyncio.run(asyncio.wait_for(main(), 30))
