"""``Drain``: how a hub stops (SIGTERM): its runs finish, or end interrupted and told.

The server stops accepting connections and asks its connections to shut down; the first such
request begins the hub's drain (``Drain.begin``; at the latest the hub's ``shutdown`` does):

1. no new run starts (``server_stopping``, 503); answers to questions still arrive, so a run
   waiting on one may finish; the clients of a session with no run here are let go at once
   (close 1012, service restart: they reconnect, to another server);
2. the runs going here have ``drain_seconds`` to finish, as usual;
3. the rest are cut: their questions end ``server_restarted``, their end is saved with a note,
   and their clients get ``run_finished {outcome: "interrupted"}`` (a REST caller, 503);
4. every client left is let go (1012) once it has been sent what is its.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Protocol, TypeVar

from neta.errors import HostError, StorageUnavailable
from neta.hosting.clarify_bridge import ClarifyBridge
from neta.hosting.cluster.cluster import Cluster
from neta.hosting.config import HostConfig
from neta.hosting.live import Connection, LiveSession

T = TypeVar("T")

_log = logging.getLogger("neta.hosting")

SERVICE_RESTART = 1012
"""The WebSocket close code a stopping server lets its clients go with (try again later)."""

FLUSH_SECONDS = 2.0
"""The longest a stopping worker waits for its last frames to reach its own clients."""


def stopping_error() -> HostError:
    """The refusal of a stopping server: the client may send it again, to another server."""
    return HostError(
        "the server is stopping: what was saved is kept; send the message again (to another "
        "server, or once this one is back)",
        code="server_stopping",
    )


class DrainHub(Protocol):
    """What a drain needs of its hub (a ``SessionHub``)."""

    @property
    def config(self) -> HostConfig:
        """The hub's configuration (``drain_seconds``)."""

    @property
    def clarify(self) -> ClarifyBridge:
        """The questions of the hub's sessions."""

    @property
    def cluster(self) -> Cluster | None:
        """The hub's part in a host of several workers, if it is one."""

    def sessions_running(self) -> list[LiveSession]:
        """The sessions whose run is going here."""

    async def cancel_run(self, live: LiveSession) -> bool:
        """Cancel the session's run, if any (``SessionHub.cancel_run``)."""


class Drain:
    """A hub's stop: its open connections, and whether (and how far) it is stopping."""

    def __init__(self, hub: DrainHub) -> None:
        self.hub = hub
        self.connections: set[Connection] = set()
        self.stopped = asyncio.Event()
        """Set once the runs are over (finished or cut): what still waits is let go."""
        self._task: asyncio.Task[None] | None = None

    @property
    def begun(self) -> bool:
        """Whether the hub is stopping (no run may start)."""
        return self._task is not None

    def begin(self) -> None:
        """Begin draining (in the running loop), unless it has begun."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._drain(), name="neta-drain")

    async def finish(self) -> None:
        """Drain (begin if not begun), and wait until it is done."""
        self.begin()
        assert self._task is not None
        await asyncio.wait({self._task})
        if not self._task.cancelled() and self._task.exception() is not None:
            _log.error("the drain failed", exc_info=self._task.exception())

    def opened(self, connection: Connection) -> None:
        """Note a client connection (let go at once when the drain leaves it nothing)."""
        self.connections.add(connection)
        if self.begun and (self.stopped.is_set() or not _runs_here(connection)):
            _let_go(connection)

    def closed(self, connection: Connection) -> None:
        """Forget a client connection that closed."""
        self.connections.discard(connection)

    async def unless_stopped(self, work: Awaitable[T]) -> T:
        """``work``'s result, unless the drain is done first (then ``server_stopping``)."""
        task = asyncio.ensure_future(work)
        stopped = asyncio.ensure_future(self.stopped.wait())
        try:
            await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            if not task.done():
                task.cancel()
        if not task.done():  # cut short by the drain: let it unwind
            await asyncio.wait({task})
        if task.cancelled():
            raise stopping_error()
        return task.result()

    async def _drain(self) -> None:
        hub = self.hub
        for connection in list(self.connections):
            if not _runs_here(connection):
                _let_go(connection)
        running = hub.sessions_running()
        runs = {live.run for live in running if live.run is not None}
        try:
            if runs:
                seconds = hub.config.drain_seconds
                _log.warning("event=drain_started runs=%d seconds=%g", len(runs), seconds)
                await asyncio.wait(runs, timeout=seconds)
            cut = [live for live in running if live.running]
            await asyncio.gather(*(self._interrupt(live) for live in cut))
            if cut:
                _log.warning("event=drain_cut runs=%d", len(cut))
        finally:
            self.stopped.set()
            if hub.cluster is not None:
                await hub.cluster.flush(FLUSH_SECONDS)
            for connection in list(self.connections):
                _let_go(connection)

    async def _interrupt(self, live: LiveSession) -> None:
        """Cut the session's run: its questions are lost to the stop, its end saved and told."""
        try:
            live.stopping = self.hub.clarify.lose_pending(live)
        except StorageUnavailable:  # they stay waiting in the store: the next start notes them
            live.stopping = []
        await self.hub.cancel_run(live)  # one that only saves its end is left to finish it
        if live.run is not None:
            await asyncio.wait({live.run})


def _runs_here(connection: Connection) -> bool:
    return connection.live is not None and connection.live.running


def _let_go(connection: Connection) -> None:
    if connection.outbox is not None:
        connection.outbox.close(SERVICE_RESTART, "the server is stopping; connect again")
