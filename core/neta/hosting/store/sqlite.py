"""``SqliteStore``: the ``Store`` in one SQLite file, shared by the processes of one home.

Every SQLite failure (a full disk, a read-only file) is raised as ``StorageUnavailable``.

The file is ``NETA_HOME/neta.db`` (``NETA_HOME`` defaults to ``~/.neta``). WAL mode lets a
reader and a writer work at once; every write is one short transaction. The host calls the
store from its event loop: a write only appends what changed, and with ``synchronous=NORMAL``
a commit does not wait for the disk (a power cut may lose the last commits; a crash of the
process loses nothing committed).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from neta.errors import SessionOwned, StorageUnavailable, UnknownSession
from neta.hosting.store import InlineCalls, RunCalls, RunMark, StoredQuestion, StoredSession
from neta.messages import Message

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    entry TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS todos (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pending_clarify (
    request_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    question TEXT NOT NULL,
    choices TEXT,
    created REAL NOT NULL,
    approval TEXT
);
CREATE TABLE IF NOT EXISTS lost_clarify (
    request_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    question TEXT NOT NULL,
    choices TEXT,
    created REAL NOT NULL,
    approval TEXT
);
CREATE TABLE IF NOT EXISTS leases (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    owner TEXT NOT NULL,
    expires REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS leases_by_owner ON leases (owner);
"""


_RUN_MARKS: dict[RunMark | None, str] = {
    None: "",
    "going": ", run_owner = :owner, run_interrupted = 0",
    "ended": ", run_owner = NULL",
    "interrupted": ", run_owner = NULL, run_interrupted = 1",
}
"""What a save sets of the session's run mark (``Store.save``'s ``run``)."""

_QuestionRow = tuple[str, str, str, str | None, float, str | None]


def _question(row: _QuestionRow) -> StoredQuestion:
    request_id, session_id, text, choices, _, approval = row
    return StoredQuestion(
        request_id,
        session_id,
        text,
        None if choices is None else json.loads(choices),
        None if approval is None else json.loads(approval),
    )


@contextmanager
def _unavailable_on_error(doing: str) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as exc:  # a full disk, a read-only or closed file, I/O errors
        raise StorageUnavailable(f"the session store cannot {doing}: {exc}") from exc


class SqliteStore:
    """The ``Store`` in a SQLite file (thread-safe; one connection, one lock)."""

    remote = False
    """Calls wait on a local file only: a run makes them inline."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        new = not path.exists()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        if new:
            path.chmod(0o600)  # conversations are private; SQLite's -wal and -shm follow
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(sessions)")}
        if "version" not in columns:  # a file written before versions were kept
            self._db.execute("ALTER TABLE sessions ADD COLUMN version INTEGER NOT NULL DEFAULT 0")
        for table in ("pending_clarify", "lost_clarify"):  # written before approvals were kept
            columns = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
            if "approval" not in columns:
                self._db.execute(f"ALTER TABLE {table} ADD COLUMN approval TEXT")
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(sessions)")}
        if "run_owner" not in columns:  # written before runs were kept here
            self._db.execute("ALTER TABLE sessions ADD COLUMN run_owner TEXT")
            self._db.execute(
                "ALTER TABLE sessions ADD COLUMN run_interrupted INTEGER NOT NULL DEFAULT 0"
            )
        self._db.execute(
            "CREATE INDEX IF NOT EXISTS sessions_running ON sessions (id) "
            "WHERE run_owner IS NOT NULL"
        )

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it is written, or none of it."""
        with self._lock, _unavailable_on_error("write"):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                if self._db.in_transaction:  # SQLite may have rolled back already (a full disk)
                    self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock, _unavailable_on_error("read"):
            yield self._db

    def create(self, session_id: str, entry: str) -> None:
        """Record a new, empty session."""
        now = time.time()
        with self._tx() as db:
            db.execute(
                "INSERT OR IGNORE INTO sessions (id, entry, created, updated) VALUES (?, ?, ?, ?)",
                (session_id, entry, now, now),
            )

    def exists(self, session_id: str) -> bool:
        """Whether the session was ever saved (and not deleted)."""
        with self._read() as db:
            row = db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return row is not None

    def version(self, session_id: str) -> int | None:
        """The session's save count, or ``None`` if there is no such session."""
        with self._read() as db:
            row = db.execute("SELECT version FROM sessions WHERE id = ?", (session_id,)).fetchone()
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
        """Replace a session's history from position ``start`` on, and its todo snapshot.

        ``messages`` are the history from ``start``: what was saved before ``start`` stays.
        ``todos`` of ``None`` leaves the saved todo list as it was; ``run`` marks the run
        (``Store.save``). Returns the new version.

        Raises:
            SessionOwned: ``owner`` does not hold the session's lease.
        """
        with self._tx() as db:
            held = db.execute(
                "SELECT 1 FROM leases WHERE session_id = ? AND owner = ?", (session_id, owner)
            ).fetchone()
            if held is None:
                raise SessionOwned(session_id)
            db.execute(
                f"UPDATE sessions SET updated = :now, version = version + 1{_RUN_MARKS[run]} "
                "WHERE id = :sid",
                {"now": time.time(), "owner": owner, "sid": session_id},
            )
            db.execute(
                "DELETE FROM messages WHERE session_id = ? AND seq >= ?", (session_id, start)
            )
            db.executemany(
                "INSERT INTO messages VALUES (?, ?, ?)",
                [(session_id, start + i, m.model_dump_json()) for i, m in enumerate(messages)],
            )
            if todos is not None:
                db.execute("INSERT OR REPLACE INTO todos VALUES (?, ?)", (session_id, todos))
            row = db.execute("SELECT version FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return int(row[0])

    def load(self, session_id: str) -> StoredSession | None:
        """The saved session, or ``None`` if there is none."""
        with self._read() as db:
            row = db.execute(
                "SELECT entry, version, run_owner FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                return None
            bodies = db.execute(
                "SELECT body FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
            ).fetchall()
            todo_row = db.execute(
                "SELECT body FROM todos WHERE session_id = ?", (session_id,)
            ).fetchone()
        history = [Message.model_validate_json(body) for (body,) in bodies]
        todos = todo_row[0] if todo_row else None
        return StoredSession(
            session_id, row[0], history, todos, version=int(row[1]), run_owner=row[2]
        )

    def delete(self, session_id: str) -> None:
        """Forget a session and everything saved with it."""
        with self._tx() as db:
            db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def delete_idle(self, ttl: float) -> list[str]:
        """Forget the sessions saved last over ``ttl`` seconds ago that nobody leases."""
        now = time.time()
        with self._tx() as db:
            rows = db.execute(
                "DELETE FROM sessions WHERE updated < ? AND id NOT IN "
                "(SELECT session_id FROM leases WHERE expires > ?) RETURNING id",
                (now - ttl, now),
            ).fetchall()
        return sorted(row[0] for row in rows)

    def add_question(self, question: StoredQuestion) -> None:
        """Remember a question that waits for an answer."""
        choices = None if question.choices is None else json.dumps(question.choices)
        approval = None if question.approval is None else json.dumps(question.approval)
        row = (question.request_id, question.session_id, question.question, choices)
        with self._tx() as db:
            db.execute(
                "INSERT OR REPLACE INTO pending_clarify VALUES (?, ?, ?, ?, ?, ?)",
                (*row, time.time(), approval),
            )

    def remove_question(self, request_id: str) -> None:
        """Forget a question (answered, timed out or cancelled)."""
        with self._tx() as db:
            db.execute("DELETE FROM pending_clarify WHERE request_id = ?", (request_id,))

    def pending_questions(self, session_id: str) -> list[StoredQuestion]:
        """The session's questions that wait for an answer, oldest first."""
        with self._read() as db:
            rows = db.execute(
                "SELECT * FROM pending_clarify WHERE session_id = ? ORDER BY created", (session_id,)
            ).fetchall()
        return [_question(row) for row in rows]

    def lose_questions(self, request_ids: list[str] | None = None) -> list[StoredQuestion]:
        """Mark waiting questions as lost to a restart, and return them.

        ``None`` means every waiting question whose session no live lease covers.
        """
        with self._tx() as db:
            if request_ids is None:
                rows = db.execute(
                    "SELECT * FROM pending_clarify WHERE session_id NOT IN "
                    "(SELECT session_id FROM leases WHERE expires > ?)",
                    (time.time(),),
                ).fetchall()
            else:
                marks = ",".join("?" * len(request_ids))
                rows = db.execute(
                    f"SELECT * FROM pending_clarify WHERE request_id IN ({marks})", request_ids
                ).fetchall()
            db.executemany("INSERT OR REPLACE INTO lost_clarify VALUES (?, ?, ?, ?, ?, ?)", rows)
            db.executemany(
                "DELETE FROM pending_clarify WHERE request_id = ?", [(r[0],) for r in rows]
            )
        return [_question(row) for row in rows]

    def take_lost_questions(self, session_id: str) -> list[StoredQuestion]:
        """The session's questions lost to a restart, forgetting them."""
        with self._tx() as db:
            rows = db.execute(
                "SELECT * FROM lost_clarify WHERE session_id = ? ORDER BY created", (session_id,)
            ).fetchall()
            db.execute("DELETE FROM lost_clarify WHERE session_id = ?", (session_id,))
        return [_question(row) for row in rows]

    # -- leases ---------------------------------------------------------------------------------

    def acquire(self, session_id: str, owner: str, ttl: float) -> bool:
        """Take or renew the session's lease for ``ttl`` seconds; false if another holds it.

        Raises:
            UnknownSession: no such session.
        """
        now = time.time()
        with self._tx() as db:
            if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
                raise UnknownSession(session_id)
            row = db.execute(
                "SELECT owner, expires FROM leases WHERE session_id = ?", (session_id,)
            ).fetchone()
            if row is not None and row[0] != owner and row[1] > now:
                return False
            db.execute(
                "INSERT OR REPLACE INTO leases VALUES (?, ?, ?)", (session_id, owner, now + ttl)
            )
        return True

    def renew(self, owner: str, ttl: float) -> None:
        """Extend every lease ``owner`` holds by ``ttl`` seconds from now."""
        with self._tx() as db:
            db.execute("UPDATE leases SET expires = ? WHERE owner = ?", (time.time() + ttl, owner))

    def release(self, session_id: str, owner: str) -> None:
        """Give up the session's lease, if ``owner`` holds it."""
        with self._tx() as db:
            db.execute("DELETE FROM leases WHERE session_id = ? AND owner = ?", (session_id, owner))

    def owner(self, session_id: str) -> str | None:
        """Who holds the session's lease now, or ``None``."""
        with self._read() as db:
            row = db.execute(
                "SELECT owner FROM leases WHERE session_id = ? AND expires > ?",
                (session_id, time.time()),
            ).fetchone()
        return None if row is None else str(row[0])

    def release_all(self, owner: str) -> None:
        """Give up every lease ``owner`` holds."""
        with self._tx() as db:
            db.execute("DELETE FROM leases WHERE owner = ?", (owner,))

    def lease_owners(self) -> list[str]:
        """Every owner holding a live lease."""
        with self._read() as db:
            rows = db.execute(
                "SELECT DISTINCT owner FROM leases WHERE expires > ?", (time.time(),)
            ).fetchall()
        return sorted(str(row[0]) for row in rows)

    def interrupted_runs(self) -> list[str]:
        """The sessions whose run is marked going while no live lease covers them."""
        with self._read() as db:
            rows = db.execute(
                "SELECT id FROM sessions WHERE run_owner IS NOT NULL AND id NOT IN "
                "(SELECT session_id FROM leases WHERE expires > ?)",
                (time.time(),),
            ).fetchall()
        return sorted(str(row[0]) for row in rows)

    def take_interrupted(self, session_id: str) -> bool:
        """Whether the session's last run was interrupted untold; told from now on."""
        with self._tx() as db:
            row = db.execute(
                "UPDATE sessions SET run_interrupted = 0 "
                "WHERE id = ? AND run_interrupted = 1 RETURNING 1",
                (session_id,),
            ).fetchone()
        return row is not None

    def run_calls(self) -> RunCalls:
        """The calls a run makes: this store's own, inline (a short write to a local file)."""
        return InlineCalls(self)

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
