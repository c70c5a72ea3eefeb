"""``ClientPool``: model-API clients a host shares between its sessions, closed with the host.

Building an API client is not free (the ``openai`` SDK's costs tens of milliseconds of
synchronous work, an SSL context included, even for ``http://``), and each client keeps its own
connection pool. A host serving many sessions therefore keeps one client per provider
configuration and event loop: it makes the pool active while its runs execute
(``with pool.active():``), providers take their clients from ``active_pool()``, and the host
closes them all when it stops (``await pool.aclose()``). A run outside a host makes a pool
of its own for its turns (``Agent.run``). Without any active pool (a provider called
directly) a provider makes a client per call and closes it again. Provider plugins take their
clients the same way, through the public ``neta.active_pool()``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["ClientPool", "active_pool"]

_T = TypeVar("_T")

_ACTIVE: ContextVar[ClientPool | None] = ContextVar("neta_client_pool", default=None)


class ClientPool:
    """Clients by configuration and event loop, created on first use and closed together."""

    def __init__(self) -> None:
        self._clients: dict[
            tuple[asyncio.AbstractEventLoop, Hashable], tuple[Any, Callable[[Any], Awaitable[None]]]
        ] = {}

    def get(
        self, key: Hashable, create: Callable[[], _T], close: Callable[[_T], Awaitable[None]]
    ) -> _T:
        """The client for ``key`` on the running event loop, made with ``create`` the first time.

        ``close`` is how ``aclose`` will close it.
        """
        slot = (asyncio.get_running_loop(), key)
        found = self._clients.get(slot)
        if found is None:
            found = (create(), close)
            self._clients[slot] = found
        client: _T = found[0]
        return client

    def __len__(self) -> int:
        return len(self._clients)

    @contextmanager
    def active(self) -> Iterator[ClientPool]:
        """Make this pool the one providers use in the current context (a run's task)."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)

    async def aclose(self) -> None:
        """Close the clients of the running loop; forget those of other (finished) loops."""
        loop = asyncio.get_running_loop()
        clients, self._clients = self._clients, {}
        await asyncio.gather(
            *(close(client) for (owner, _), (client, close) in clients.items() if owner is loop),
            return_exceptions=True,
        )


def active_pool() -> ClientPool | None:
    """The pool a host made active for the current run, if any."""
    return _ACTIVE.get()
