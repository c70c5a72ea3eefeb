"""``Batcher``: calls of one kind that come together, made in one statement (group commit).

A worker's runs call the store many times each: a run's saves (before each model call, before
its tools, at its end), its questions, and a session's opening, claiming and release. Made one
by one, each call is a round trip and the better part of a millisecond of the worker's CPU,
whatever it writes. So a call that comes while another of its kind is on its way waits for it,
and then goes with every call of that kind that came meanwhile, in one statement (the store's
statements each take any number of sessions): alone, a call goes at once; under load, many go
for the price of one. Each caller gets its own answer, and its own failure: a statement that
fails for several callers is made again for each alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

import psycopg

from neta.errors import StorageUnavailable

Item = TypeVar("Item")
Result = TypeVar("Result")

MAX_BATCH = 200
"""The most calls one statement carries."""


class Batcher(Generic[Item, Result]):
    """Calls of one kind waiting to be made, and the one statement on its way.

    Args:
        make_many: makes calls in one statement; their results, in order.
        key: what may not occur twice in one statement (a session's id: its rows).
    """

    def __init__(
        self,
        make_many: Callable[[list[Item]], Awaitable[list[Result]]],
        key: Callable[[Item], str],
    ) -> None:
        self._make_many = make_many
        self._key = key
        self._waiting: list[tuple[Item, asyncio.Future[Result]]] = []
        self._sending: asyncio.Task[None] | None = None

    async def call(self, item: Item) -> Result:
        """Make the call (with others that come meanwhile); its result.

        The call is made even if the caller is cancelled meanwhile.

        Raises:
            StorageUnavailable: the store could not make it.
        """
        made: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, made))
        if self._sending is None or self._sending.done():
            self._sending = asyncio.create_task(self._send(), name="neta-store-batch")
        return await made

    async def drain(self) -> None:
        """Wait until every call asked for is made (the connections are about to close)."""
        while self._sending is not None and not self._sending.done():
            await asyncio.wait({self._sending})

    async def _send(self) -> None:
        while self._waiting:
            batch = self._next_batch()
            try:
                await self._make(batch)
            except BaseException:  # cancelled (the loop is closing): nobody waits in vain
                for _, made in batch:
                    made.cancel()
                raise

    async def _make(self, batch: list[tuple[Item, asyncio.Future[Result]]]) -> None:
        try:
            results = await self._make_many([item for item, _ in batch])
        except Exception as exc:
            if len(batch) > 1 and not _unreachable(exc):  # which failed it? each alone says
                for one in batch:
                    await self._make([one])
                return
            for _, made in batch:
                if not made.done():
                    made.set_exception(_failure(exc))
        else:
            for (_, made), result in zip(batch, results, strict=True):
                if not made.done():
                    made.set_result(result)

    def _next_batch(self) -> list[tuple[Item, asyncio.Future[Result]]]:
        """The calls to make next: in order, each key once, at most ``MAX_BATCH``."""
        batch: list[tuple[Item, asyncio.Future[Result]]] = []
        keys: set[str] = set()
        for item, made in self._waiting:
            key = self._key(item)
            if key in keys or len(batch) == MAX_BATCH:
                break
            keys.add(key)
            batch.append((item, made))
        del self._waiting[: len(batch)]
        return batch


def _unreachable(failure: BaseException) -> bool:
    """Whether ``failure`` is the database's, not one call's (it would fail each alone too)."""
    return isinstance(failure.__cause__, psycopg.OperationalError)


def _failure(cause: Exception) -> Exception:
    """What one caller of a statement that failed with ``cause`` is told."""
    if isinstance(cause, StorageUnavailable):
        failure = StorageUnavailable(str(cause))
    elif isinstance(cause, ValueError):  # text the database cannot take (unpaired surrogates)
        failure = StorageUnavailable(f"the session store cannot write this: {cause}")
    else:
        return cause
    failure.__cause__ = cause
    return failure
