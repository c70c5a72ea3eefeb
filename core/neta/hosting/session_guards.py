"""``SessionGuards``: one step at a time on a session's copy in memory, per session.

Opening, claiming and releasing a session wait on the store (on a network, a round trip).
Two connections opening the same session at once must still end up with one copy of it in
memory, and a session going idle must not lose its lease to a connection that just opened
it: each of these steps holds the session's guard while it waits on the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class SessionGuards:
    """An ``asyncio.Lock`` per session id, kept only while someone holds or waits for it."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, list[int]]] = {}

    @asynccontextmanager
    async def hold(self, session_id: str) -> AsyncIterator[None]:
        """Hold the session's guard for the block (waiting for whoever holds it now)."""
        lock, users = self._locks.setdefault(session_id, (asyncio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if users[0] == 0:
                del self._locks[session_id]
