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
call is one statement (the connections are in autocommit: a single statement is its own
transaction, without ``BEGIN`` and ``COMMIT`` round trips), a save included; the run calls
make the calls of one kind that come together in one (``postgres_batches``). A
pooled connection the server broke (a restart) is replaced, and a statement safe to make
twice made again on a fresh one (``postgres_retry``).

The ``Store`` interface is synchronous (the hub opens and claims a session between awaits),
so this engine uses psycopg's blocking connections from a ``psycopg_pool.ConnectionPool``. The
calls a run makes (its saves and questions, the heartbeat, command routing) go through
``run_calls()`` instead: ``neta.hosting.store.postgres_calls``, the same statements on psycopg's
async connections from an ``AsyncConnectionPool``, so that a worker's event loop never waits
on the database for them. The SQL of both is in ``neta.hosting.store.postgres_sql``, and
their rows are read and written by ``neta.hosting.store.postgres_rows``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from neta.errors import ConfigError, SessionOwned, StorageUnavailable, UnknownSession
from neta.hosting.store import RunCalls, RunMark, StoredQuestion, StoredSession
from neta.hosting.store import postgres_sql as sql
from neta.hosting.store.postgres_rows import (
    Row,
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
from neta.safe_url import safe_reason, safe_url

try:
    import psycopg
    from psycopg_pool import ConnectionPool

    from neta.hosting.store.postgres_retry import Statements
except ImportError:  # pragma: no cover - depends on the installed extras
    psycopg = None  # type: ignore[assignment]

SCHEMA_VERSION = sql.SCHEMA_VERSION
"""The schema version this code writes; older databases are migrated to it on start."""

RUN_CONNECTIONS = 16
"""The most connections of the run calls' pool: the saves of many sessions at once, each one
short statement (fewer would make them queue for a connection)."""


class PostgresStore:
    """The ``Store`` in a PostgreSQL database (thread-safe; a pool of connections).

    Args:
        url: a ``postgresql://`` connection URL.
        max_connections: the most connections this process opens for its blocking calls
            (``run_calls`` opens up to ``RUN_CONNECTIONS`` more).
        timeout: seconds to wait for the database at start and for a free connection.

    Raises:
        ConfigError: the ``neta[scale]`` extra (psycopg) is not installed.
        StorageUnavailable: the database cannot be reached or migrated.
    """

    remote = True
    """Calls wait on the database server: a run makes them through ``run_calls``."""

    def __init__(self, url: str, *, max_connections: int = 4, timeout: float = 10.0) -> None:
        if psycopg is None:
            raise ConfigError("NETA_DATABASE_URL needs psycopg: pip install 'neta[scale]'")
        self.url = url
        self._max_connections, self._timeout = max_connections, timeout
        self._run_calls: RunCalls | None = None
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            open=False,
            timeout=timeout,
            kwargs={"autocommit": True},
        )
        try:
            # first one connection of its own: a database that cannot be reached says why
            # (the pool would only say that it waited for a connection in vain)
            wait = max(2, round(timeout))  # libpq's connect_timeout: whole seconds, at least 2
            with psycopg.connect(url, autocommit=True, connect_timeout=wait) as first:
                self._migrate(first)
            self._pool.open(wait=True, timeout=timeout)
        except (psycopg.Error, TimeoutError) as exc:
            self._pool.close()
            raise StorageUnavailable(
                f"the session store cannot open {safe_url(url)}: {safe_reason(exc, url)}"
            ) from exc

    def _migrate(self, db: psycopg.Connection[Row]) -> None:
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (sql.MIGRATION_LOCK,))
            db.execute("CREATE TABLE IF NOT EXISTS neta_schema (version INTEGER NOT NULL)")
            row = db.execute("SELECT max(version) FROM neta_schema").fetchone()
            have = int(row[0]) if row and row[0] is not None else 0
            if have > SCHEMA_VERSION:
                raise StorageUnavailable(
                    f"the session store has schema version {have}, newer than this Neta's "
                    f"{SCHEMA_VERSION}: upgrade Neta"
                )
            for step in range(have + 1, SCHEMA_VERSION + 1):
                db.execute(sql.MIGRATIONS[step].encode())
                db.execute("INSERT INTO neta_schema VALUES (%s)", (step,))

    def schema_version(self) -> int:
        """The schema version the database has."""
        with self._one() as db:
            row = db.execute("SELECT max(version) FROM neta_schema").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    @contextmanager
    def _one(self) -> Iterator[Statements]:
        """A connection for one statement (autocommit: the statement is its transaction).

        One the server broke since it was pooled is replaced (``postgres_retry``).
        """
        try:
            statements = Statements(self._pool)
            try:
                yield statements
            finally:
                statements.give_back()
        except (psycopg.Error, TimeoutError) as exc:
            raise StorageUnavailable(f"the session store failed: {exc}") from exc

    def create(self, session_id: str, entry: str) -> None:
        """Record a new, empty session."""
        with self._one() as db:
            db.execute(sql.CREATE_SESSION, creates_params([(session_id, entry)]))

    def exists(self, session_id: str) -> bool:
        """Whether the session was saved (and not deleted)."""
        with self._one() as db:
            row = db.execute(sql.EXISTS, (session_id,)).fetchone()
        return row is not None

    def version(self, session_id: str) -> int | None:
        """The session's save count, or ``None`` if there is no such session."""
        with self._one() as db:
            row = db.execute(sql.VERSION, (session_id,)).fetchone()
        return None if row is None else int(row[0])

    def save(
        self,
        session_id: str,
        messages: list[Message],
        *,
        owner: str,
        start: int = 0,
        todos: str | None = None,
        run: RunMark | None = None,
    ) -> int:
        """Replace the history from position ``start`` on (and the todo list, unless ``None``).

        ``run`` marks the session's run (``Store.save``). Returns the session's new version.

        Raises:
            SessionOwned: ``owner`` does not hold the session's lease.
        """
        params = saves_params([save_params(session_id, messages, owner, start, todos, run)])
        with self._one() as db:
            saved = db.execute(sql.SAVE, params).fetchone()
        if saved is None:
            raise SessionOwned(session_id)
        return int(saved[1])

    def load(self, session_id: str) -> StoredSession | None:
        """The saved session, or ``None`` if there is none."""
        with self._one() as db:
            row = db.execute(sql.LOAD, (session_id,)).fetchone()
        return None if row is None else session_of(session_id, row)

    def delete(self, session_id: str) -> None:
        """Forget a session and everything saved with it."""
        with self._one() as db:
            db.execute(sql.DELETE_SESSION, (session_id,))

    def delete_idle(self, ttl: float) -> list[str]:
        """Forget the sessions saved last over ``ttl`` seconds ago that nobody leases."""
        with self._one() as db:
            return sorted(row[0] for row in db.execute(sql.DELETE_IDLE, (ttl,)).fetchall())

    def add_question(self, question: StoredQuestion) -> None:
        """Remember a question that waits for an answer."""
        with self._one() as db:
            db.execute(sql.ADD_QUESTION, questions_params([question_row(question)]))

    def remove_question(self, request_id: str) -> None:
        """Forget a question (answered, timed out or cancelled)."""
        with self._one() as db:
            db.execute(sql.REMOVE_QUESTION, ([request_id],))

    def pending_questions(self, session_id: str) -> list[StoredQuestion]:
        """The session's questions that wait for an answer, oldest first."""
        with self._one() as db:
            rows = db.execute(sql.PENDING_QUESTIONS, (session_id,)).fetchall()
        return [question_of(row) for row in rows]

    def lose_questions(self, request_ids: list[str] | None = None) -> list[StoredQuestion]:
        """Mark waiting questions as lost to a restart, and return them.

        ``None`` means every waiting question whose session no live lease covers.
        """
        params: tuple[list[str], ...] = ()
        which = sql.ORPHANED
        if request_ids is not None:
            which, params = sql.NAMED, (request_ids,)
        with self._one() as db:
            rows = db.execute(sql.LOSE_QUESTIONS.format(which=which).encode(), params).fetchall()
        return [question_of(row) for row in sorted(rows, key=lambda r: r[4])]

    def take_lost_questions(self, session_id: str) -> list[StoredQuestion]:
        """The session's questions lost to a restart, forgetting them."""
        with self._one() as db:
            rows = db.execute(sql.TAKE_LOST, (session_id,)).fetchall()
        return [question_of(row) for row in sorted(rows, key=lambda r: r[4])]

    # -- leases ---------------------------------------------------------------------------------

    def acquire(self, session_id: str, owner: str, ttl: float) -> bool:
        """Take or renew the session's lease for ``ttl`` seconds; false if another holds it.

        Raises:
            UnknownSession: no such session.
        """
        with self._one() as db:
            taken = db.execute(sql.ACQUIRE, acquires_params([(session_id, owner, ttl)]))
            if taken.fetchone() is not None:
                return True
            # Refused, or no such session: only then is it worth a second look.
            known = db.execute(sql.EXISTS, (session_id,)).fetchone()
        if known is None:
            raise UnknownSession(session_id)
        return False

    def renew(self, owner: str, ttl: float) -> None:
        """Extend every lease ``owner`` holds by ``ttl`` seconds from now."""
        with self._one() as db:
            db.execute(sql.RENEW, {"owner": owner, "ttl": ttl})

    def release(self, session_id: str, owner: str) -> None:
        """Give up the session's lease, if ``owner`` holds it."""
        with self._one() as db:
            db.execute(sql.RELEASE, releases_params([(session_id, owner)]))

    def owner(self, session_id: str) -> str | None:
        """Who holds the session's lease now, or ``None``."""
        with self._one() as db:
            row = db.execute(sql.OWNER, (session_id,)).fetchone()
        return None if row is None else str(row[0])

    def release_all(self, owner: str) -> None:
        """Give up every lease ``owner`` holds."""
        with self._one() as db:
            db.execute(sql.RELEASE_ALL, (owner,))

    def lease_owners(self) -> list[str]:
        """Every owner holding a live lease."""
        with self._one() as db:
            return [str(row[0]) for row in db.execute(sql.LEASE_OWNERS).fetchall()]

    def interrupted_runs(self) -> list[str]:
        """The sessions whose run is marked going while no live lease covers them."""
        with self._one() as db:
            return [str(row[0]) for row in db.execute(sql.INTERRUPTED_RUNS).fetchall()]

    def take_interrupted(self, session_id: str) -> bool:
        """Whether the session's last run was interrupted untold; told from now on."""
        with self._one() as db:
            return db.execute(sql.TAKE_INTERRUPTED, (session_id,)).fetchone() is not None

    def run_calls(self) -> RunCalls:
        """The calls a run makes, on the event loop (an async pool on this database)."""
        if self._run_calls is None:
            from neta.hosting.store.postgres_calls import PostgresRunCalls

            self._run_calls = PostgresRunCalls(self.url, RUN_CONNECTIONS, self._timeout)
        return self._run_calls

    def close(self) -> None:
        """Close the pool's connections (``RunCalls.close`` closes the run calls' pool)."""
        self._pool.close()
