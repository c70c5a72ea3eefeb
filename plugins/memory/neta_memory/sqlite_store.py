"""The embedded memory store: one SQLite file per user scope, searched with FTS5 and BM25.

The file is ``NETA_HOME/memory/<scope>.db`` (``NETA_HOME`` defaults to ``~/.neta``). Nothing
touches the disk until the first save, recall or forget, so listing tools stays side-effect free.

Several processes may share a file: it runs in WAL mode, every connection waits up to
``busy_timeout`` seconds for a lock instead of failing, and every write is one short
transaction. Connections are opened per operation, so a store may be used from any thread.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

import neta
from neta_memory.store import Memory, check_entry

DEFAULT_SCOPE = "default"
"""The user scope of a session whose extras name none."""

MAX_QUERY_TERMS = 32
"""Words of a recall query beyond this many are ignored."""

_SCOPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_WORD = re.compile(r"[^\W_]+")
_SCHEMA_VERSION = 1
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS memories (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        content TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '',
        created TEXT NOT NULL
    )""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
        content, tags, content='memories', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    )""",
    """CREATE TRIGGER IF NOT EXISTS memories_added AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts(rowid, content, tags) VALUES (new.id, new.content, new.tags);
    END""",
    """CREATE TRIGGER IF NOT EXISTS memories_removed AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, content, tags)
        VALUES ('delete', old.id, old.content, old.tags);
    END""",
    f"PRAGMA user_version = {_SCHEMA_VERSION}",
)
# A tag hit says more than a word somewhere in the text.
_RECALL = """
    SELECT m.id, m.content, m.tags, m.created
    FROM memories_fts JOIN memories AS m ON m.id = memories_fts.rowid
    WHERE memories_fts MATCH ?
    ORDER BY bm25(memories_fts, 1.0, 2.0), m.id DESC
    LIMIT ?
"""


def neta_home() -> Path:
    """``NETA_HOME``, or ``~/.neta`` when it is not set."""
    return Path(os.environ.get("NETA_HOME") or Path.home() / ".neta").expanduser()


def scope_path(scope: str, *, home: Path | None = None) -> Path:
    """The database file of user scope ``scope`` (a safe file name, checked).

    Raises:
        neta.ConfigError: ``scope`` is not 1-64 letters, digits, ``.``, ``_`` or ``-``
            starting with a letter or digit.
    """
    if not isinstance(scope, str) or not _SCOPE.match(scope):
        raise neta.ConfigError(
            f"invalid memory scope {scope!r}: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return (home if home is not None else neta_home()) / "memory" / f"{scope}.db"


def fts_query(query: str) -> str:
    """Turn free text into an FTS5 query that cannot be a syntax error.

    Every word becomes a quoted phrase and the phrases are joined with ``OR``, so operators,
    quotes and parentheses in the text are plain characters and BM25 ranks the memories that
    share the most (and rarest) words first.

    Raises:
        neta.ToolError: the text holds no word to search for.
    """
    terms = list(dict.fromkeys(word.lower() for word in _WORD.findall(query)))
    if not terms:
        raise neta.ToolError(
            f"the query {query[:80]!r} has no words to search for; give one or more keywords"
        )
    return " OR ".join(f'"{term}"' for term in terms[:MAX_QUERY_TERMS])


class SQLiteMemoryStore:
    """A ``MemoryStore`` in one SQLite file (created with its folders on first use).

    Args:
        path: the database file.
        busy_timeout: seconds to wait for another writer before giving up.
    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self._ready = False
        self._ready_lock = threading.Lock()

    @classmethod
    def for_scope(
        cls, scope: str = DEFAULT_SCOPE, *, home: Path | None = None
    ) -> SQLiteMemoryStore:
        """The store of user scope ``scope`` under ``home`` (default: ``NETA_HOME``)."""
        return cls(scope_path(scope, home=home))

    def __repr__(self) -> str:
        return f"SQLiteMemoryStore({str(self.path)!r})"

    def save(self, content: str, tags: Sequence[str] = ()) -> Memory:
        """Store a fact (see ``check_entry`` for the limits) and return it with its id."""
        text, cleaned = check_entry(content, tags)
        created = dt.datetime.now(dt.UTC).replace(microsecond=0)
        with self._connection() as db:
            cursor = db.execute(
                "INSERT INTO memories (content, tags, created) VALUES (?, ?, ?)",
                (text, " ".join(cleaned), created.isoformat()),
            )
        if cursor.lastrowid is None:  # pragma: no cover - an INSERT always sets it
            raise neta.ToolError("the memory database did not return an id for the new memory")
        return Memory(id=cursor.lastrowid, content=text, tags=cleaned, created=created)

    def recall(self, query: str, limit: int = 5) -> list[Memory]:
        """The memories that best match ``query`` by BM25, best first, at most ``limit``."""
        if limit < 1:
            raise neta.ToolError(f"limit must be at least 1, not {limit}")
        match = fts_query(query)
        with self._connection() as db:
            rows = db.execute(_RECALL, (match, limit)).fetchall()
        return [_memory(row) for row in rows]

    def forget(self, memory_id: int) -> Memory | None:
        """Delete memory ``memory_id`` and return it, or ``None`` if there is no such memory."""
        with self._connection() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute(
                    "SELECT id, content, tags, created FROM memories WHERE id = ?", (memory_id,)
                ).fetchone()
                if row is not None:
                    db.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return None if row is None else _memory(row)

    def count(self) -> int:
        """How many memories the file holds."""
        with self._connection() as db:
            (total,) = db.execute("SELECT count(*) FROM memories").fetchone()
        return int(total)

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """A fresh autocommit connection; SQLite failures become a ``ToolError``."""
        try:
            self._prepare()
            with closing(self._open()) as db:
                yield db
        except sqlite3.Error as exc:
            raise neta.ToolError(
                f"the memory database {self.path} failed: {type(exc).__name__}: {exc}"
            ) from exc

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None)
        db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        return db

    def _prepare(self) -> None:
        """Create the folders, switch the file to WAL and create the tables, once per store."""
        with self._ready_lock:
            if self._ready:
                return
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise neta.ToolError(
                    f"cannot create the memory folder {self.path.parent}: {exc.strerror or exc}"
                ) from exc
            with closing(self._open()) as db:
                self._enable_wal(db)
                db.execute("PRAGMA synchronous = NORMAL")
                db.execute("BEGIN IMMEDIATE")
                try:
                    for statement in _SCHEMA:
                        db.execute(statement)
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
            self._ready = True

    def _enable_wal(self, db: sqlite3.Connection) -> None:
        # Switching the journal mode needs the file to itself and may report "locked" without
        # waiting while another process holds it; retry within the busy timeout.
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)


def _memory(row: tuple[int, str, str, str]) -> Memory:
    memory_id, content, tags, created = row
    return Memory(
        id=memory_id,
        content=content,
        tags=tuple(tags.split()),
        created=dt.datetime.fromisoformat(created),
    )
