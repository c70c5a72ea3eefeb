"""Sessions on disk: history, todo lists and pending questions in one SQLite file.

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
from dataclasses import dataclass
from pathlib import Path

from neta.errors import StorageUnavailable
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
    created REAL NOT NULL
);
"""


@contextmanager
def _unavailable_on_error(doing: str) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as exc:  # a full disk, a read-only or closed file, I/O errors
        raise StorageUnavailable(f"the session store cannot {doing}: {exc}") from exc


@dataclass(frozen=True)
class StoredSession:
    """A session as saved: its entry kind, history and todo list (JSON text, or ``None``)."""

    session_id: str
    entry: str
    history: list[Message]
    todos: str | None


@dataclass(frozen=True)
class StoredQuestion:
    """A question that was waiting for an answer when it was saved."""

    request_id: str
    session_id: str
    question: str
    choices: list[str] | None


class SessionStore:
    """Reads and writes sessions in a SQLite file (thread-safe; one connection, one lock)."""

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
                "INSERT OR IGNORE INTO sessions VALUES (?, ?, ?, ?)", (session_id, entry, now, now)
            )

    def exists(self, session_id: str) -> bool:
        """Whether the session was ever saved (and not deleted)."""
        with self._read() as db:
            row = db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return row is not None

    def save(
        self,
        session_id: str,
        messages: list[Message],
        *,
        start: int = 0,
        todos: str | None = None,
    ) -> None:
        """Replace a session's history from position ``start`` on, and its todo snapshot.

        ``messages`` are the history from ``start``: what was saved before ``start`` stays.
        ``todos`` of ``None`` leaves the saved todo list as it was.
        """
        with self._tx() as db:
            db.execute("UPDATE sessions SET updated = ? WHERE id = ?", (time.time(), session_id))
            db.execute(
                "DELETE FROM messages WHERE session_id = ? AND seq >= ?", (session_id, start)
            )
            db.executemany(
                "INSERT INTO messages VALUES (?, ?, ?)",
                [(session_id, start + i, m.model_dump_json()) for i, m in enumerate(messages)],
            )
            if todos is not None:
                db.execute("INSERT OR REPLACE INTO todos VALUES (?, ?)", (session_id, todos))

    def load(self, session_id: str) -> StoredSession | None:
        """The saved session, or ``None`` if there is none."""
        with self._read() as db:
            row = db.execute("SELECT entry FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                return None
            bodies = db.execute(
                "SELECT body FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
            ).fetchall()
            todo_row = db.execute(
                "SELECT body FROM todos WHERE session_id = ?", (session_id,)
            ).fetchone()
        history = [Message.model_validate_json(body) for (body,) in bodies]
        return StoredSession(session_id, row[0], history, todo_row[0] if todo_row else None)

    def delete(self, session_id: str) -> None:
        """Forget a session and everything saved with it."""
        with self._tx() as db:
            db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def add_question(self, question: StoredQuestion) -> None:
        """Remember a question that waits for an answer."""
        choices = None if question.choices is None else json.dumps(question.choices)
        with self._tx() as db:
            db.execute(
                "INSERT OR REPLACE INTO pending_clarify VALUES (?, ?, ?, ?, ?)",
                (question.request_id, question.session_id, question.question, choices, time.time()),
            )

    def remove_question(self, request_id: str) -> None:
        """Forget a question (answered, timed out or cancelled)."""
        with self._tx() as db:
            db.execute("DELETE FROM pending_clarify WHERE request_id = ?", (request_id,))

    def take_questions(self) -> list[StoredQuestion]:
        """Every saved question, removing them all (used once at start-up)."""
        with self._tx() as db:
            rows = db.execute(
                "SELECT request_id, session_id, question, choices FROM pending_clarify"
            ).fetchall()
            db.execute("DELETE FROM pending_clarify")
        return [
            StoredQuestion(rid, sid, text, None if choices is None else json.loads(choices))
            for rid, sid, text, choices in rows
        ]

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
