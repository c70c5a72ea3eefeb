"""One ``AsyncAnthropic`` client per configuration and event loop, closed with its loop.

A client holds a connection pool bound to the event loop it first ran on, so it is shared
only on that loop: every session of a host (one loop) reuses one client per configuration,
and a command that runs its own loop (``asyncio.run``) gets its own. Each client is held by a
suspended async generator; when its loop shuts down (``asyncio.run`` and uvicorn finalize
async generators on the way out), the generator is closed and closes the client, on the loop
its connections belong to.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, Hashable
from typing import Any

import anthropic

_CLIENTS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop,
    dict[Hashable, tuple[anthropic.AsyncAnthropic, AsyncGenerator[None, None]]],
] = weakref.WeakKeyDictionary()


async def pooled_client(options: dict[str, Any]) -> anthropic.AsyncAnthropic:
    """The running loop's client for ``options`` (``AsyncAnthropic`` keywords), made once."""
    loop = asyncio.get_running_loop()
    clients = _CLIENTS.setdefault(loop, {})
    key = tuple(sorted(options.items()))
    found = clients.get(key)
    if found is None or found[0].is_closed():
        client = anthropic.AsyncAnthropic(**options)
        keeper = _keep(client)
        clients[key] = (client, keeper)
        await keeper.asend(None)  # registered with the loop: closed when the loop shuts down
        return client
    return found[0]


def clients_on_this_loop() -> int:
    """How many clients the running loop holds (for tests and diagnostics)."""
    return len(_CLIENTS.get(asyncio.get_running_loop(), {}))


async def _keep(client: anthropic.AsyncAnthropic) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.close()
