"""Statements on pooled PostgreSQL connections, made again once when the connection was broken.

A pool keeps its connections open between calls. When the database server restarts, every one
of them breaks, and the pool only learns it when a statement fails on one: without a second
try, each call after a restart would fail once per pooled connection (runs stopping with
``storage_unavailable``, a user's message dropped). So a statement that fails because its
connection broke is made again, once, on a fresh connection, after the pool has checked its
idle ones (they went down with it).

A statement the server chose to roll back to break a deadlock (another transaction waited for
it in a circle) is made again once too, on its own connection.

Only statements safe to make twice are (``postgres_sql.RETRY_SAFE``): the first may have
committed before its answer was lost. Reads are; so are writes whose second run leaves what
the first left (a save writes the same messages at the same positions again, and its version
then counts one save more). Statements that move or take rows are not: a second run would
find them gone, and its caller would never hear of them.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg
import psycopg.errors
from psycopg.abc import Params
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from neta.hosting.store.postgres_sql import RETRY_SAFE

_log = logging.getLogger("neta.hosting")


def _again(db: psycopg.BaseConnection[Any], query: str | bytes) -> bool:
    """Whether ``query``, failed on ``db``, is to be made again on another connection."""
    if not db.broken or query not in RETRY_SAFE:
        return False
    _log.warning("a pooled connection to the session store broke; trying a fresh one")
    return True


class Statements:
    """Where one call of ``PostgresStore`` makes its statements: a connection of ``pool``."""

    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool
        self._db: psycopg.Connection[Any] | None = None

    def execute(self, query: str | bytes, params: Params | None = None) -> psycopg.Cursor[Any]:
        """``Connection.execute``, once more on a fresh connection if its own was broken."""
        if self._db is None:
            self._db = self._pool.getconn()
        try:
            return self._db.execute(query, params)
        except psycopg.errors.DeadlockDetected:  # rolled back whole: its second try may pass
            if query not in RETRY_SAFE:
                raise
            return self._db.execute(query, params)
        except psycopg.OperationalError:
            if not _again(self._db, query):
                raise
        self.give_back()
        self._pool.check()
        self._db = self._pool.getconn()
        return self._db.execute(query, params)

    def give_back(self) -> None:
        """Return the connection to the pool (which drops it if it is broken)."""
        db, self._db = self._db, None
        if db is not None:
            self._pool.putconn(db)


class AsyncStatements:
    """Where one call of ``PostgresRunCalls`` makes its statements: a connection of ``pool``."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self._pool = pool
        self._db: psycopg.AsyncConnection[Any] | None = None

    async def execute(
        self, query: str | bytes, params: Params | None = None
    ) -> psycopg.AsyncCursor[Any]:
        """``AsyncConnection.execute``, once more on a fresh connection if its own was broken."""
        if self._db is None:
            self._db = await self._pool.getconn()
        try:
            return await self._db.execute(query, params)
        except psycopg.errors.DeadlockDetected:  # rolled back whole: its second try may pass
            if query not in RETRY_SAFE:
                raise
            return await self._db.execute(query, params)
        except psycopg.OperationalError:
            if not _again(self._db, query):
                raise
        await self.give_back()
        await self._pool.check()
        self._db = await self._pool.getconn()
        return await self._db.execute(query, params)

    async def give_back(self) -> None:
        """Return the connection to the pool (which drops it if it is broken)."""
        db, self._db = self._db, None
        if db is not None:
            await self._pool.putconn(db)
