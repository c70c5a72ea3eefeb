"""A worker's cluster stops when it is closed, whatever its bus calls do with the cancel."""

from __future__ import annotations

import asyncio

from neta.errors import StorageUnavailable
from neta.hosting.cluster.bus import Command, LocalBus
from neta.hosting.cluster.cluster import Cluster
from tests.core.hosting.server_harness import scripted_hub


class CutOnCancel(LocalBus):
    """An in-process bus whose waits, when cancelled, fail as a cut connection would.

    A Redis client cancelled in the middle of a blocking call may close the connection and
    raise a connection error instead of ``CancelledError``.
    """

    async def receive(self, owner: str, timeout: float) -> Command | None:
        try:
            return await super().receive(owner, timeout)
        except asyncio.CancelledError:
            raise StorageUnavailable(
                "the bus cannot receive a command: connection closed"
            ) from None

    async def read_many(self, after, timeout, **options):
        try:
            return await super().read_many(after, timeout, **options)
        except asyncio.CancelledError:
            raise StorageUnavailable("the bus cannot read events: connection closed") from None


def test_closing_stops_the_loops_even_when_a_cancelled_bus_call_fails_instead(tmp_path):
    async def main() -> None:
        hub = scripted_hub(tmp_path)
        cluster = Cluster(hub, CutOnCancel())
        cluster.start()
        follower = cluster.follow("s1", _Nowhere(), None)
        await asyncio.sleep(0.1)  # the loops wait in the bus now
        await asyncio.wait_for(cluster.close(), 5)
        follower.cancel()
        hub.store.close()

    asyncio.run(main())


class _Nowhere:
    def put(self, frame: dict[str, object]) -> None:
        pass

    def close(self, code: int, reason: str) -> None:
        pass
