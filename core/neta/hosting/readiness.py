"""``unready``: whether a host can serve now, as ``/readyz`` tells a load balancer.

It can when its store and its bus answer. Each is asked one cheap question (whether a session
that does not exist exists; the last frame of a stream that does not exist), within
``READY_SECONDS``. The reason given names the part only: what failed, and where, goes to the
log, not to whoever asks.
"""

from __future__ import annotations

import asyncio
import logging
import secrets

from neta.errors import StorageUnavailable
from neta.hosting.cluster.bus import Bus
from neta.hosting.store import Store

READY_SECONDS = 3.0
"""How long the store and the bus each have to answer a readiness check."""

_log = logging.getLogger("neta.hosting")


async def unready(store: Store, bus: Bus | None) -> str | None:
    """Why the host cannot serve now (its store or its bus does not answer), or ``None``.

    ``bus`` is ``None`` for a host of one process (its bus is in memory).
    """
    probe = f"readiness-{secrets.token_hex(8)}"
    try:
        async with asyncio.timeout(READY_SECONDS):
            await store.run_calls().exists(probe)
    except (StorageUnavailable, TimeoutError) as exc:
        _log.warning("not ready: the store does not answer: %s", exc or "timed out")
        return "the store cannot be reached"
    if bus is None:
        return None
    try:
        async with asyncio.timeout(READY_SECONDS):
            await bus.last_id(probe)
    except (StorageUnavailable, TimeoutError) as exc:
        _log.warning("not ready: the bus does not answer: %s", exc or "timed out")
        return "the bus cannot be reached"
    return None
