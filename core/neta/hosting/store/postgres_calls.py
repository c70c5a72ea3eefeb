"""``PostgresRunCalls``: the calls a run makes to the PostgreSQL store, on the event loop.

psycopg's async connections, from an ``AsyncConnectionPool`` opened in the worker's event loop
on first use: while the database works, the loop runs the worker's other sessions. The
statements are the blocking engine's (``neta.hosting.store.postgres_sql``), and so are the answers:
every database failure is raised as ``StorageUnavailable``. The calls of one kind its
sessions make together (made, claimed, saved, asked, settled, let go) go in one statement
(``neta.hosting.store.postgres_batches``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from neta.errors import SessionOwned, StorageUnavailable, UnknownSession
from neta.hosting.store import RunMark, StoredQuestion, StoredSession
from neta.hosting.store import postgres_sql as sql
from neta.hosting.store.postgres_batches import Batcher
from neta.hosting.store.postgres_retry import AsyncStatements
from neta.hosting.store.postgres_rows import (
    SaveParams,
    acquires_params,
    creates_params,
    question_of,
    question_row,
    questions_params,
    releases_params,
    save_params,
    saves_params,
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
        # calls of one kind that come together go in one statement (``Batcher``)
        self._saved = Batcher(self._save_many, key=lambda save: save.session_id)
        self._added = Batcher(self._add_many, key=lambda row: str(row["request_id"]))
        self._removed = Batcher(self._remove_many, key=str)
        self._released = Batcher(self._release_many, key=lambda lease: lease[0])
        self._created = Batcher(self._create_many, key=lambda session: session[0])
        self._acquired = Batcher(self._acquire_many, key=lambda lease: lease[0])

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
    async def _one(self) -> AsyncIterator[AsyncStatements]:
        """A connection for one statement (autocommit: the statement is its transaction).

        One the server broke since it was pooled is replaced (``postgres_retry``).
        """
        try:
            statements = AsyncStatements(await self._opened())
            try:
                yield statements
            finally:
                await statements.give_back()
        except (psycopg.Error, TimeoutError) as exc:
            raise StorageUnavailable(f"the session store failed: {exc}") from exc

    async def create(self, session_id: str, entry: str) -> None:
        """``Store.create``, with others that come meanwhile (``Batcher``)."""
        await self._created.call((session_id, entry))

    async def _create_many(self, sessions: list[tuple[str, str]]) -> list[None]:
        await self._execute(sql.CREATE_SESSION, creates_params(sessions))
        return [None] * len(sessions)

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
        run: RunMark | None = None,
    ) -> int:
        """``Store.save``, with the saves of other sessions that come meanwhile (``Batcher``)."""
        version = await self._saved.call(
            save_params(session_id, messages, owner, start, todos, run)
        )
        if version is None:
            raise SessionOwned(session_id)
        return version

    async def _save_many(self, saves: list[SaveParams]) -> list[int | None]:
        async with self._one() as db:
            rows = await (await db.execute(sql.SAVE, saves_params(saves))).fetchall()
        versions = {str(sid): int(version) for sid, version in rows}
        return [versions.get(save.session_id) for save in saves]

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
        """``Store.add_question``, with others that come meanwhile (``Batcher``)."""
        await self._added.call(question_row(question))

    async def _add_many(self, questions: list[dict[str, Any]]) -> list[None]:
        await self._execute(sql.ADD_QUESTION, questions_params(questions))
        return [None] * len(questions)

    async def remove_question(self, request_id: str) -> None:
        """``Store.remove_question``, with others that come meanwhile (``Batcher``)."""
        await self._removed.call(request_id)

    async def _remove_many(self, request_ids: list[str]) -> list[None]:
        await self._execute(sql.REMOVE_QUESTION, (request_ids,))
        return [None] * len(request_ids)

    async def pending_questions(self, session_id: str) -> list[StoredQuestion]:
        """``Store.pending_questions``."""
        async with self._one() as db:
            rows = await (await db.execute(sql.PENDING_QUESTIONS, (session_id,))).fetchall()
        return [question_of(row) for row in rows]

    async def acquire(self, session_id: str, owner: str, ttl: float) -> bool:
        """``Store.acquire``, with others that come meanwhile (``Batcher``)."""
        taken = await self._acquired.call((session_id, owner, ttl))
        if taken is None:
            raise UnknownSession(session_id)
        return taken

    async def _acquire_many(self, leases: list[tuple[str, str, float]]) -> list[bool | None]:
        """Whether each lease was taken (``None``: no such session)."""
        async with self._one() as db:
            rows = await (await db.execute(sql.ACQUIRE, acquires_params(leases))).fetchall()
            taken = {str(row[0]) for row in rows}
            refused = [sid for sid, _, _ in leases if sid not in taken]
            known: set[str] = set()
            if refused:  # refused, or no such session: only then is it worth a second look
                found = await (await db.execute(sql.KNOWN, (refused,))).fetchall()
                known = {str(row[0]) for row in found}
        return [True if sid in taken else (False if sid in known else None) for sid, _, _ in leases]

    async def renew(self, owner: str, ttl: float) -> None:
        """``Store.renew``."""
        async with self._one() as db:
            await db.execute(sql.RENEW, {"owner": owner, "ttl": ttl})

    async def release(self, session_id: str, owner: str) -> None:
        """``Store.release``, with others that come meanwhile (``Batcher``)."""
        await self._released.call((session_id, owner))

    async def _release_many(self, leases: list[tuple[str, str]]) -> list[None]:
        await self._execute(sql.RELEASE, releases_params(leases))
        return [None] * len(leases)

    async def _execute(self, statement: str, params: tuple[Any, ...]) -> None:
        async with self._one() as db:
            await db.execute(statement, params)

    async def owner(self, session_id: str) -> str | None:
        """``Store.owner``."""
        async with self._one() as db:
            row = await (await db.execute(sql.OWNER, (session_id,))).fetchone()
        return None if row is None else str(row[0])

    async def release_all(self, owner: str) -> None:
        """``Store.release_all``."""
        async with self._one() as db:
            await db.execute(sql.RELEASE_ALL, (owner,))

    async def lease_owners(self) -> list[str]:
        """``Store.lease_owners``."""
        async with self._one() as db:
            rows = await (await db.execute(sql.LEASE_OWNERS)).fetchall()
        return [str(row[0]) for row in rows]

    async def interrupted_runs(self) -> list[str]:
        """``Store.interrupted_runs``."""
        async with self._one() as db:
            rows = await (await db.execute(sql.INTERRUPTED_RUNS)).fetchall()
        return [str(row[0]) for row in rows]

    async def take_interrupted(self, session_id: str) -> bool:
        """``Store.take_interrupted``."""
        async with self._one() as db:
            row = await (await db.execute(sql.TAKE_INTERRUPTED, (session_id,))).fetchone()
        return row is not None

    async def close(self) -> None:
        """Close the pool's connections (once the calls asked for are made)."""
        batchers = (self._saved, self._added, self._removed, self._released)
        for batched in (*batchers, self._created, self._acquired):
            await batched.drain()
        pool, self._pool, self._opening = self._pool, None, None
        if pool is not None:
            await pool.close()
