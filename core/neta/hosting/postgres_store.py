"""``PostgresStore``: the ``Store`` in a PostgreSQL database, shared by workers on many machines.

Chosen with ``NETA_DATABASE_URL=postgresql://…`` (needs the ``neta[scale]`` extra). The
schema is created on start and migrated forward: the table ``neta_schema`` records the
version a database has, and a worker starting on an older one applies the missing steps in
one transaction under an advisory lock, so that workers starting together migrate once.

Lease times come from the database server's clock, never a worker's, so that workers on
machines whose clocks disagree still agree on who holds a session. Every call borrows a
connection from a small pool and is one transaction; every database failure (the server
gone, a full disk) is raised as ``StorageUnavailable``.

Round trips are what a call costs (a worker saves a session several times per run), so each
call is one statement where it can be (the connections are in autocommit: a single statement
is its own transaction, without ``BEGIN`` and ``COMMIT`` round trips), and a save sends its
statements in one pipeline: two round trips however many messages it writes.

The ``Store`` interface is synchronous (the hub opens and claims a session between awaits),
so this engine uses psycopg's blocking connections from a ``psycopg_pool.ConnectionPool``,
which is thread-safe: being ``remote``, it is called in threads (``off_loop``) for the work a
run does, so that a worker's event loop never waits on the database for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from neta.errors import ConfigError, SessionOwned, StorageUnavailable, UnknownSession
from neta.hosting.engines import safe_url
from neta.hosting.store import StoredQuestion, StoredSession
from neta.messages import Message

try:
    import psycopg
    from psycopg_pool import ConnectionPool
except ImportError:  # pragma: no cover - depends on the installed extras
    psycopg = None  # type: ignore[assignment]

SCHEMA_VERSION = 1
"""The schema version this code writes; older databases are migrated to it on start."""

_MIGRATIONS: dict[int, str] = {
    1: """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    entry TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
    updated DOUBLE PRECISION NOT NULL,
    version INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE messages (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE todos (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    body TEXT NOT NULL
);
CREATE TABLE pending_clarify (
    request_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    question TEXT NOT NULL,
    choices TEXT,
    created DOUBLE PRECISION NOT NULL
);
CREATE TABLE lost_clarify (
    request_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    question TEXT NOT NULL,
    choices TEXT,
    created DOUBLE PRECISION NOT NULL
);
CREATE TABLE leases (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    owner TEXT NOT NULL,
    expires DOUBLE PRECISION NOT NULL
);
CREATE INDEX leases_by_owner ON leases (owner);
""",
}

_NOW = "extract(epoch from clock_timestamp())"
"""The database server's clock, in seconds (every worker reads the same one)."""

_MIGRATION_LOCK = 0x6E657461  # an arbitrary advisory-lock key for schema changes

Row = tuple[Any, ...]


def _question(row: Row) -> StoredQuestion:
    request_id, session_id, text, choices = row[:4]
    return StoredQuestion(
        request_id, session_id, text, None if choices is None else json.loads(choices)
    )


class PostgresStore:
    """The ``Store`` in a PostgreSQL database (thread-safe; a pool of connections).

    Args:
        url: a ``postgresql://`` connection URL.
        max_connections: the most connections this process opens.
        timeout: seconds to wait for the database at start and for a free connection.

    Raises:
        ConfigError: the ``neta[scale]`` extra (psycopg) is not installed.
        StorageUnavailable: the database cannot be reached or migrated.
    """

    remote = True
    """Calls wait on the database server: the hub makes them off the event loop."""

    def __init__(self, url: str, *, max_connections: int = 8, timeout: float = 10.0) -> None:
        if psycopg is None:
            raise ConfigError("NETA_DATABASE_URL needs psycopg: pip install 'neta[scale]'")
        self.url = url
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            open=False,
            timeout=timeout,
            kwargs={"autocommit": True},
        )
        try:
            self._pool.open(wait=True, timeout=timeout)
            self._migrate()
        except (psycopg.Error, TimeoutError) as exc:
            self._pool.close()
            raise StorageUnavailable(
                f"the session store cannot open {safe_url(url)}: {exc}"
            ) from exc

    def _migrate(self) -> None:
        with self._pool.connection() as db, db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            db.execute("CREATE TABLE IF NOT EXISTS neta_schema (version INTEGER NOT NULL)")
            row = db.execute("SELECT max(version) FROM neta_schema").fetchone()
            have = int(row[0]) if row and row[0] is not None else 0
            if have > SCHEMA_VERSION:
                raise StorageUnavailable(
                    f"the session store has schema version {have}, newer than this Neta's "
                    f"{SCHEMA_VERSION}: upgrade Neta"
                )
            for step in range(have + 1, SCHEMA_VERSION + 1):
                db.execute(_MIGRATIONS[step].encode())
                db.execute("INSERT INTO neta_schema VALUES (%s)", (step,))

    def schema_version(self) -> int:
        """The schema version the database has."""
        with self._one() as db:
            row = db.execute("SELECT max(version) FROM neta_schema").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    @contextmanager
    def _one(self) -> Iterator[psycopg.Connection[Row]]:
        """A connection for one statement (autocommit: the statement is its transaction)."""
        try:
            with self._pool.connection() as db:
                yield db
        except (psycopg.Error, TimeoutError) as exc:
            raise StorageUnavailable(f"the session store failed: {exc}") from exc

    @contextmanager
    def _pipelined_tx(self) -> Iterator[psycopg.Connection[Row]]:
        """One transaction whose statements go out together: all of it is written, or none."""
        try:
            with self._pool.connection() as db, db.pipeline(), db.transaction():
                yield db
        except (psycopg.Error, TimeoutError) as exc:
            raise StorageUnavailable(f"the session store failed: {exc}") from exc

    def create(self, session_id: str, entry: str) -> None:
        """Record a new, empty session."""
        with self._one() as db:
            db.execute(
                f"INSERT INTO sessions (id, entry, created, updated) VALUES (%s, %s, {_NOW}, "
                f"{_NOW}) ON CONFLICT (id) DO NOTHING",
                (session_id, entry),
            )

    def exists(self, session_id: str) -> bool:
        """Whether the session was saved (and not deleted)."""
        with self._one() as db:
            row = db.execute("SELECT 1 FROM sessions WHERE id = %s", (session_id,)).fetchone()
        return row is not None

    def version(self, session_id: str) -> int | None:
        """The session's save count, or ``None`` if there is no such session."""
        with self._one() as db:
            row = db.execute("SELECT version FROM sessions WHERE id = %s", (session_id,)).fetchone()
        return None if row is None else int(row[0])

    def save(
        self,
        session_id: str,
        messages: list[Message],
        *,
        owner: str,
        start: int = 0,
        todos: str | None = None,
    ) -> int:
        """Replace the history from position ``start`` on (and the todo list, unless ``None``).

        Returns the session's new version.

        Raises:
            SessionOwned: ``owner`` does not hold the session's lease.
        """
        with self._pipelined_tx() as db:
            # The lease row is locked until the save commits: a takeover waits for it.
            held = db.execute(
                "SELECT 1 FROM leases WHERE session_id = %s AND owner = %s FOR UPDATE",
                (session_id, owner),
            )
            version = db.execute(
                f"UPDATE sessions SET updated = {_NOW}, version = version + 1 WHERE id = %s "
                "RETURNING version",
                (session_id,),
            )
            db.execute(
                "DELETE FROM messages WHERE session_id = %s AND seq >= %s", (session_id, start)
            )
            if messages:
                with db.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO messages VALUES (%s, %s, %s)",
                        [
                            (session_id, start + i, m.model_dump_json())
                            for i, m in enumerate(messages)
                        ],
                    )
            if todos is not None:
                db.execute(
                    "INSERT INTO todos VALUES (%s, %s) "
                    "ON CONFLICT (session_id) DO UPDATE SET body = EXCLUDED.body",
                    (session_id, todos),
                )
            # Reading a result sends the statements and waits for them: one round trip.
            # Without the lease the transaction is rolled back, the writes with it.
            if held.fetchone() is None:
                raise SessionOwned(session_id)
            row = version.fetchone()
        assert row is not None  # the lease's foreign key keeps the session
        return int(row[0])

    def load(self, session_id: str) -> StoredSession | None:
        """The saved session, or ``None`` if there is none."""
        # One statement: one snapshot of the session, its messages and its todos.
        with self._one() as db:
            row = db.execute(
                "SELECT entry, version, "
                "ARRAY(SELECT body FROM messages WHERE session_id = s.id ORDER BY seq), "
                "(SELECT body FROM todos WHERE session_id = s.id) "
                "FROM sessions s WHERE id = %s",
                (session_id,),
            ).fetchone()
        if row is None:
            return None
        entry, version, bodies, todos = row
        history = [Message.model_validate_json(body) for body in bodies]
        return StoredSession(session_id, entry, history, todos, version=int(version))

    def delete(self, session_id: str) -> None:
        """Forget a session and everything saved with it."""
        with self._one() as db:
            db.execute("DELETE FROM sessions WHERE id = %s", (session_id,))

    def add_question(self, question: StoredQuestion) -> None:
        """Remember a question that waits for an answer."""
        choices = None if question.choices is None else json.dumps(question.choices)
        with self._one() as db:
            db.execute(
                f"INSERT INTO pending_clarify VALUES (%s, %s, %s, %s, {_NOW}) "
                "ON CONFLICT (request_id) DO UPDATE SET question = EXCLUDED.question, "
                "choices = EXCLUDED.choices",
                (question.request_id, question.session_id, question.question, choices),
            )

    def remove_question(self, request_id: str) -> None:
        """Forget a question (answered, timed out or cancelled)."""
        with self._one() as db:
            db.execute("DELETE FROM pending_clarify WHERE request_id = %s", (request_id,))

    def pending_questions(self, session_id: str) -> list[StoredQuestion]:
        """The session's questions that wait for an answer, oldest first."""
        with self._one() as db:
            rows = db.execute(
                "SELECT * FROM pending_clarify WHERE session_id = %s ORDER BY created",
                (session_id,),
            ).fetchall()
        return [_question(row) for row in rows]

    def lose_questions(self, request_ids: list[str] | None = None) -> list[StoredQuestion]:
        """Mark waiting questions as lost to a restart, and return them.

        ``None`` means every waiting question whose session no live lease covers.
        """
        if request_ids is None:
            which = f"session_id NOT IN (SELECT session_id FROM leases WHERE expires > {_NOW})"
            params: tuple[Any, ...] = ()
        else:
            which, params = "request_id = ANY(%s)", (request_ids,)
        with self._one() as db:  # one statement: moved whole, or not at all
            rows = db.execute(
                f"WITH gone AS (DELETE FROM pending_clarify WHERE {which} RETURNING *), "
                "kept AS (INSERT INTO lost_clarify SELECT * FROM gone "
                "ON CONFLICT (request_id) DO NOTHING) "
                "SELECT * FROM gone",
                params,
            ).fetchall()
        return [_question(row) for row in sorted(rows, key=lambda r: r[4])]

    def take_lost_questions(self, session_id: str) -> list[StoredQuestion]:
        """The session's questions lost to a restart, forgetting them."""
        with self._one() as db:
            rows = db.execute(
                "DELETE FROM lost_clarify WHERE session_id = %s RETURNING *", (session_id,)
            ).fetchall()
        return [_question(row) for row in sorted(rows, key=lambda r: r[4])]

    # -- leases ---------------------------------------------------------------------------------

    def acquire(self, session_id: str, owner: str, ttl: float) -> bool:
        """Take or renew the session's lease for ``ttl`` seconds; false if another holds it.

        Raises:
            UnknownSession: no such session.
        """
        with self._one() as db:
            row = db.execute(
                f"INSERT INTO leases SELECT id, %s, {_NOW} + %s FROM sessions WHERE id = %s "
                "ON CONFLICT (session_id) DO UPDATE SET owner = EXCLUDED.owner, "
                "expires = EXCLUDED.expires "
                f"WHERE leases.owner = EXCLUDED.owner OR leases.expires <= {_NOW} "
                "RETURNING owner",
                (owner, ttl, session_id),
            ).fetchone()
            if row is not None:
                return True
            # Refused, or no such session: only then is it worth a second look.
            known = db.execute("SELECT 1 FROM sessions WHERE id = %s", (session_id,)).fetchone()
        if known is None:
            raise UnknownSession(session_id)
        return False

    def renew(self, owner: str, ttl: float) -> None:
        """Extend every lease ``owner`` holds by ``ttl`` seconds from now."""
        with self._one() as db:
            db.execute(f"UPDATE leases SET expires = {_NOW} + %s WHERE owner = %s", (ttl, owner))

    def release(self, session_id: str, owner: str) -> None:
        """Give up the session's lease, if ``owner`` holds it."""
        with self._one() as db:
            db.execute(
                "DELETE FROM leases WHERE session_id = %s AND owner = %s", (session_id, owner)
            )

    def owner(self, session_id: str) -> str | None:
        """Who holds the session's lease now, or ``None``."""
        with self._one() as db:
            row = db.execute(
                f"SELECT owner FROM leases WHERE session_id = %s AND expires > {_NOW}",
                (session_id,),
            ).fetchone()
        return None if row is None else str(row[0])

    def release_all(self, owner: str) -> None:
        """Give up every lease ``owner`` holds."""
        with self._one() as db:
            db.execute("DELETE FROM leases WHERE owner = %s", (owner,))

    def close(self) -> None:
        """Close the pool's connections."""
        self._pool.close()
