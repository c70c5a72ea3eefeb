"""``Leases``: the sessions this server process owns, and the heartbeat that keeps them.

Several processes may serve one home (one store). A process runs a session, or holds a client
connection to it, only while it holds the session's lease in the store; another process asking
for the session meanwhile gets ``SessionOwned``. The heartbeat renews this process's leases
every third of ``ttl``; a process that dies stops renewing and its sessions are free again
``ttl`` seconds later, or at once when it ran on this machine and provably runs no more
(``neta.hosting.cluster.owners``). Each beat also runs ``on_beat`` (the hub finds the questions
and runs a dead process left there).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from neta.errors import SessionOwned, StorageUnavailable
from neta.hosting.cluster.owners import new_owner_name, owner_is_gone
from neta.hosting.store import Store

_log = logging.getLogger("neta.hosting")


class Leases:
    """This process's session leases in ``store``, each good for ``ttl`` seconds unrenewed."""

    def __init__(self, store: Store, ttl: float, on_beat: Callable[[], Awaitable[object]]) -> None:
        self.store = store
        self.ttl = ttl
        self.owner = new_owner_name()
        self._on_beat = on_beat
        self._beat: asyncio.Task[None] | None = None
        # Until when (this process's monotonic clock) each lease taken or renewed here surely
        # has half its time left: a claim meanwhile need not ask the store (nobody can take
        # a lease before it expires).
        self._sure_until: dict[str, float] = {}

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
        """``claim`` without holding up the event loop (through the store's run calls).

        A lease this process took or renewed less than half its time ago is held: the store
        is not asked again (a run's message, a reconnecting client).
        """
        asked = time.monotonic()
        if self._sure_until.get(session_id, 0.0) > asked:
            return
        if not await self.store.run_calls().acquire(session_id, self.owner, self.ttl):
            self._sure_until.pop(session_id, None)
            raise SessionOwned(session_id)
        self._sure_until[session_id] = asked + self.ttl / 2
        self._start_heartbeat()

    async def free_gone_owners(self) -> None:
        """Free every lease whose holder provably runs no more (at start, at each beat)."""
        for holder in await self.store.run_calls().lease_owners():
            await self.free_if_gone(holder)

    async def free_if_gone(self, holder: str) -> bool:
        """Free ``holder``'s leases if it provably runs no more; whether it was freed."""
        if not owner_is_gone(holder, self.owner):
            return False
        await self.store.run_calls().release_all(holder)
        _log.warning("event=leases_freed owner=%s reason=process_gone", holder)
        return True

    def start(self) -> None:
        """Start the heartbeat now, before this process owns anything.

        A worker of several beats from the start: each beat also finds the sessions a dead
        worker left behind (``on_beat``), even on a worker that runs nothing yet.
        """
        self._start_heartbeat()

    def release(self, session_id: str) -> None:
        """Give the session's lease up (it goes idle here); a store failure only delays that."""
        self._sure_until.pop(session_id, None)
        with contextlib.suppress(StorageUnavailable):  # it lapses on its own
            self.store.release(session_id, self.owner)

    async def release_async(self, session_id: str) -> None:
        """``release`` without holding up the event loop (through the store's run calls)."""
        self._sure_until.pop(session_id, None)
        with contextlib.suppress(StorageUnavailable):  # it lapses on its own
            await self.store.run_calls().release(session_id, self.owner)

    async def stop(self) -> None:
        """Stop the heartbeat and give every lease up (the process is stopping)."""
        if self._beat is not None:
            self._beat.cancel()
            await asyncio.wait({self._beat})
            self._beat = None
        self._sure_until.clear()
        self.store.release_all(self.owner)

    def _start_heartbeat(self) -> None:
        if self._beat is not None and not self._beat.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # used outside an event loop (a script, a test): no heartbeat
            return
        self._beat = loop.create_task(self._heartbeat(), name="neta-lease-heartbeat")

    def _renewed(self, asked: float) -> None:
        """Note the renewal asked for at ``asked``: of the leases still surely held then.

        One that may have lapsed before (a beat came late) is asked for again at its next
        claim: another process may hold it now, and a renewal renews only this one's.
        """
        for session_id, until in list(self._sure_until.items()):
            if asked < until + self.ttl / 2:  # it expires no sooner than this
                self._sure_until[session_id] = asked + self.ttl / 2
            else:
                del self._sure_until[session_id]

    def forget(self, session_id: str) -> None:
        """The session is gone (deleted here): so is its lease."""
        self._sure_until.pop(session_id, None)

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.ttl / 3)
            try:
                asked = time.monotonic()
                await self.store.run_calls().renew(self.owner, self.ttl)
                self._renewed(asked)
                await self._on_beat()
            except StorageUnavailable as exc:  # try again at the next beat
                _log.warning("could not renew session leases: %s", exc)
