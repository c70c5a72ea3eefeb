"""``Leases``: the sessions this server process owns, and the heartbeat that keeps them.

Several processes may serve one home (one store). A process runs a session, or holds a client
connection to it, only while it holds the session's lease in the store; another process asking
for the session meanwhile gets ``SessionOwned``. The heartbeat renews this process's leases
every third of ``ttl``; a process that dies stops renewing and its sessions are free again
``ttl`` seconds later. Each beat also runs ``on_beat`` (the hub finds questions orphaned by a
dead process there).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from collections.abc import Awaitable, Callable

from neta.errors import SessionOwned, StorageUnavailable
from neta.hosting.store import Store

_log = logging.getLogger("neta.hosting")


class Leases:
    """This process's session leases in ``store``, each good for ``ttl`` seconds unrenewed."""

    def __init__(self, store: Store, ttl: float, on_beat: Callable[[], Awaitable[object]]) -> None:
        self.store = store
        self.ttl = ttl
        self.owner = f"{os.getpid()}-{secrets.token_hex(6)}"
        self._on_beat = on_beat
        self._beat: asyncio.Task[None] | None = None

    def claim(self, session_id: str) -> None:
        """Take (or keep) the session's lease, and keep it renewed from now on.

        Raises:
            SessionOwned: another live process holds it.
            UnknownSession: no such session.
        """
        if not self.store.acquire(session_id, self.owner, self.ttl):
            raise SessionOwned(session_id)
        self._start_heartbeat()

    async def claim_async(self, session_id: str) -> None:
        """``claim`` without holding up the event loop (through the store's run calls)."""
        if not await self.store.run_calls().acquire(session_id, self.owner, self.ttl):
            raise SessionOwned(session_id)
        self._start_heartbeat()

    def start(self) -> None:
        """Start the heartbeat now, before this process owns anything.

        A worker of several beats from the start: each beat also finds the sessions a dead
        worker left behind (``on_beat``), even on a worker that runs nothing yet.
        """
        self._start_heartbeat()

    def release(self, session_id: str) -> None:
        """Give the session's lease up (it goes idle here); a store failure only delays that."""
        with contextlib.suppress(StorageUnavailable):  # it lapses on its own
            self.store.release(session_id, self.owner)

    async def release_async(self, session_id: str) -> None:
        """``release`` without holding up the event loop (through the store's run calls)."""
        with contextlib.suppress(StorageUnavailable):  # it lapses on its own
            await self.store.run_calls().release(session_id, self.owner)

    async def stop(self) -> None:
        """Stop the heartbeat and give every lease up (the process is stopping)."""
        if self._beat is not None:
            self._beat.cancel()
            await asyncio.wait({self._beat})
            self._beat = None
        self.store.release_all(self.owner)

    def _start_heartbeat(self) -> None:
        if self._beat is not None and not self._beat.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # used outside an event loop (a script, a test): no heartbeat
            return
        self._beat = loop.create_task(self._heartbeat(), name="neta-lease-heartbeat")

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.ttl / 3)
            try:
                await self.store.run_calls().renew(self.owner, self.ttl)
                await self._on_beat()
            except StorageUnavailable as exc:  # try again at the next beat
                _log.warning("could not renew session leases: %s", exc)
