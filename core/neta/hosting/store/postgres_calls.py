"""``PostgresRunCalls``: the calls a run makes to the PostgreSQL store, on the event loop.

psycopg's async connections, from an ``AsyncConnectionPool`` opened in the worker's event loop
on first use: while the database works, the loop runs the worker's other sessions. The
statements are the blocking engine's (``neta.hosting.store.postgres_sql``), and so are the answers:
every database failure is raised as ``StorageUnavailable``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
from psycopg_pool import AsyncConnectionPool

from neta.errors import SessionOwned, StorageUnavailable, UnknownSession
from neta.hosting.store import StoredQuestion, StoredSession
from neta.hosting.store import postgres_sql as sql
from neta.hosting.store.postgres_rows import (
    Row,
    question_of,
    question_row,
    save_params,
    session_of,
)
from neta.messages import Message


class PostgresRunCalls:
    """The ``RunCalls`` of a PostgreSQL store.

    Args:
        url: the database's ``postgresql://`` URL.
        max_connections: the most connections the pool opens.
        timeout: seconds to wait for the database and for a free connection.
    """

    def __init__(self, url: str, max_connections: int, timeout: float) -> None:
        self._url = url
        self._max = max_connections
        self._timeout = timeout
        self._pool: AsyncConnectionPool | None = None
        self._opening: asyncio.Future[AsyncConnectionPool] | None = None

    async def _opened(self) -> AsyncConnectionPool:
        if self._pool is not None:
            return self._pool
        if self._opening is None:  # the first caller opens it; the others wait for that
            self._opening = asyncio.ensure_future(self._open())
        try:
            return await asyncio.shield(self._opening)
        except BaseException:
            if self._opening.done():
                self._opening = None  # a failed open is tried again by the next call
            raise

    async def _open(self) -> AsyncConnectionPool:
        pool = AsyncConnectionPool(
            self._url,
            min_size=1,
            max_size=self._max,
            open=False,
            timeout=self._timeout,
            kwargs={"autocommit": True},
        )
        await pool.open(wait=True, timeout=self._timeout)
        self._pool = pool
        return pool

    @asynccontextmanager
    async def _one(self) -> AsyncIterator[psycopg.AsyncConnection[Row]]:
        """A connection for one statement (autocommit: the statement is its transaction)."""
        try:
            pool = await self._opened()
            async with pool.connection() as db:
                yield db
        except (psycopg.Error, TimeoutError) as exc:
            raise StorageUnavailable(f"the session store failed: {exc}") from exc

    async def create(self, session_id: str, entry: str) -> None:
        """``Store.create``."""
        async with self._one() as db:
            await db.execute(sql.CREATE_SESSION, (session_id, entry))

    async def version(self, session_id: str) -> int | None:
        """``Store.version``."""
        async with self._one() as db:
            row = await (await db.execute(sql.VERSION, (session_id,))).fetchone()
        return None if row is None else int(row[0])

    async def delete(self, session_id: str) -> None:
        """``Store.delete``."""
        async with self._one() as db:
            await db.execute(sql.DELETE_SESSION, (session_id,))

    async def delete_idle(self, ttl: float) -> list[str]:
        """``Store.delete_idle``."""
        async with self._one() as db:
            cursor = await db.execute(sql.DELETE_IDLE, (ttl,))
            return sorted(row[0] for row in await cursor.fetchall())

    async def lose_questions(self, request_ids: list[str] | None = None) -> list[StoredQuestion]:
        """``Store.lose_questions``."""
        params: tuple[list[str], ...] = ()
        which = sql.ORPHANED
        if request_ids is not None:
            which, params = sql.NAMED, (request_ids,)
        statement = sql.LOSE_QUESTIONS.format(which=which).encode()
        async with self._one() as db:
            rows = await (await db.execute(statement, params)).fetchall()
        return [question_of(row) for row in sorted(rows, key=lambda r: r[4])]

    async def take_lost_questions(self, session_id: str) -> list[StoredQuestion]:
        """``Store.take_lost_questions``."""
        async with self._one() as db:
            rows = await (await db.execute(sql.TAKE_LOST, (session_id,))).fetchall()
        return [question_of(row) for row in sorted(rows, key=lambda r: r[4])]

    async def save(
        self,
        session_id: str,
        messages: list[Message],
        *,
        owner: str,
        start: int = 0,
        todos: str | None = None,
    ) -> int:
        """``Store.save`` (one statement: no lock of it outlives it)."""
        params = save_params(session_id, messages, owner, start, todos)
        async with self._one() as db:
            version = await (await db.execute(sql.SAVE, params)).fetchone()
        if version is None:
            raise SessionOwned(session_id)
        return int(version[0])

    async def load(self, session_id: str) -> StoredSession | None:
        """``Store.load``."""
        async with self._one() as db:
            row = await (await db.execute(sql.LOAD, (session_id,))).fetchone()
        return None if row is None else session_of(session_id, row)

    async def exists(self, session_id: str) -> bool:
        """``Store.exists``."""
        async with self._one() as db:
            row = await (await db.execute(sql.EXISTS, (session_id,))).fetchone()
        return row is not None

    async def add_question(self, question: StoredQuestion) -> None:
        """``Store.add_question``."""
        async with self._one() as db:
            await db.execute(sql.ADD_QUESTION, question_row(question))

    async def remove_question(self, request_id: str) -> None:
        """``Store.remove_question``."""
        async with self._one() as db:
            await db.execute(sql.REMOVE_QUESTION, (request_id,))

    async def pending_questions(self, session_id: str) -> list[StoredQuestion]:
        """``Store.pending_questions``."""
        async with self._one() as db:
            rows = await (await db.execute(sql.PENDING_QUESTIONS, (session_id,))).fetchall()
        return [question_of(row) for row in rows]

    async def acquire(self, session_id: str, owner: str, ttl: float) -> bool:
        """``Store.acquire``."""
        async with self._one() as db:
            taken = await db.execute(sql.ACQUIRE, (owner, ttl, session_id))
            if await taken.fetchone() is not None:
                return True
            known = await (await db.execute(sql.EXISTS, (session_id,))).fetchone()
        if known is None:
            raise UnknownSession(session_id)
        return False

    async def renew(self, owner: str, ttl: float) -> None:
        """``Store.renew``."""
        async with self._one() as db:
            await db.execute(sql.RENEW, (ttl, owner))

    async def release(self, session_id: str, owner: str) -> None:
        """``Store.release``."""
        async with self._one() as db:
            await db.execute(sql.RELEASE, (session_id, owner))

    async def owner(self, session_id: str) -> str | None:
        """``Store.owner``."""
        async with self._one() as db:
            row = await (await db.execute(sql.OWNER, (session_id,))).fetchone()
        return None if row is None else str(row[0])

    async def close(self) -> None:
        """Close the pool's connections."""
        pool, self._pool, self._opening = self._pool, None, None
        if pool is not None:
            await pool.close()
