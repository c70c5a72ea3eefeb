"""The embedded memory store: one SQLite file per user scope, searched with FTS5 and BM25.

The file is ``NETA_HOME/memory/<scope>.db`` (``NETA_HOME`` defaults to ``~/.neta``); the file
and its folder are created readable by their owner only. Nothing touches the disk until the
first save, recall or forget, so listing tools stays side-effect free.

Each memory belongs to a workspace (stored by its real path) or to none: the global memories.
A store sees one of these only, so a fact saved while working in one repository is never
recalled (or forgotten) in another. Memories saved before workspaces were recorded (schema
version 2 and older) are global: they were shared by every workspace then, and a store for a
workspace no longer sees them.

Several processes may share a file: it runs in WAL mode, every connection waits up to
``busy_timeout`` seconds for a lock instead of failing, and every write is one short
transaction. Connections are opened per operation, so a store may be used from any thread.

Words are found by FTS5's ``unicode61`` tokenizer, which splits text at spaces and
punctuation. Chinese, Japanese and Korean text runs words together, so every character of
those scripts is indexed as a word of its own and a query word in them becomes the phrase
of its characters: "北京" finds "用户住在北京".
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
from neta_memory.store import check_entry

DEFAULT_SCOPE = "default"
"""The user scope of a session whose extras name none."""

USER_SCOPE_KEY = "user_scope"
"""The ``session.extras`` key naming the user scope, which picks the database file."""

MEMORY_SCOPE_KEY = "memory_scope"
"""The ``session.extras`` key a host sets to ``"global"`` to share memories across workspaces.

``"workspace"`` (the default): the session saves and sees its workspace's memories only.
``"global"``: it saves and sees the global memories, which every such session shares.
"""

MAX_QUERY_TERMS = 32
"""Words of a recall query beyond this many are ignored."""

_SCOPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_WORD = re.compile(r"[^\W_]+")
# Han (with radicals, iteration marks and extensions), kana and Hangul: scripts written
# without spaces between words, indexed one character per token.
_UNSPACED = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f]"
)
_SQLITE_INTEGERS = range(-(2**63), 2**63)
_SCHEMA_VERSION = 3
_GLOBAL = ""  # the workspace column of a memory that belongs to none
_VERSION_2 = (
    """CREATE TABLE IF NOT EXISTS memories (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        content TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '',
        created TEXT NOT NULL
    )""",
    # Version 1 indexed the raw text through triggers; version 2 indexes searchable text
    # (see _searchable), which SQL alone cannot compute, so the store writes the index itself.
    "DROP TRIGGER IF EXISTS memories_added",
    "DROP TRIGGER IF EXISTS memories_removed",
    "DROP TABLE IF EXISTS memories_fts",
    """CREATE VIRTUAL TABLE IF NOT EXISTS memory_index USING fts5(
        content, tags, tokenize='porter unicode61 remove_diacritics 2'
    )""",
    "DELETE FROM memory_index",
)
# Version 3 records the workspace of each memory; older ones become global.
_VERSION_3 = (
    f"ALTER TABLE memories ADD COLUMN workspace TEXT NOT NULL DEFAULT '{_GLOBAL}'",
    "CREATE INDEX IF NOT EXISTS memories_by_workspace ON memories (workspace)",
)
# A tag hit says more than a word somewhere in the text.
_RECALL = """
    SELECT m.id, m.content, m.tags, m.created
    FROM memory_index JOIN memories AS m ON m.id = memory_index.rowid
    WHERE memory_index MATCH ? AND m.workspace = ?
    ORDER BY bm25(memory_index, 1.0, 2.0), m.id DESC
    LIMIT ?
"""
_INDEX = "INSERT INTO memory_index (rowid, content, tags) VALUES (?, ?, ?)"


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
    return (home if home is not None else neta.neta_home()) / "memory" / f"{scope}.db"


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
    phrases = (" ".join(_searchable(term).split()) for term in terms[:MAX_QUERY_TERMS])
    return " OR ".join(f'"{phrase}"' for phrase in phrases)


def _searchable(text: str) -> str:
    """``text`` as it is indexed: each character of an unspaced script set apart by spaces."""
    return _UNSPACED.sub(r" \g<0> ", text)


class SQLiteMemoryStore:
    """A ``MemoryStore`` in one SQLite file (created with its folders on first use).

    Args:
        path: the database file.
        busy_timeout: seconds to wait for another writer before giving up.
        workspace: the workspace whose memories the store saves and sees (known by its real
            path), or ``None`` for the global memories, shared by every workspace.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 30.0,
        workspace: str | os.PathLike[str] | None = None,
    ) -> None:
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self.workspace = None if workspace is None else Path(workspace).resolve()
        self._key = _GLOBAL if self.workspace is None else str(self.workspace)
        self._ready = False
        self._ready_lock = threading.Lock()

    @classmethod
    def for_scope(
        cls,
        scope: str = DEFAULT_SCOPE,
        *,
        home: Path | None = None,
        workspace: str | os.PathLike[str] | None = None,
    ) -> SQLiteMemoryStore:
        """The store of user scope ``scope`` under ``home`` (default: ``NETA_HOME``).

        ``workspace``: whose memories it sees (``None``: the global ones).
        """
        return cls(scope_path(scope, home=home), workspace=workspace)

    @classmethod
    def for_session(cls, session: neta.SessionContext) -> SQLiteMemoryStore:
        """The store a session gets: its user scope's file, its workspace's memories.

        ``session.extras["user_scope"]`` names the user scope (default ``"default"``);
        ``session.extras["memory_scope"] = "global"`` gives the global memories instead of
        the workspace's.

        Raises:
            neta.ConfigError: either setting is invalid.
        """
        scope = session.extras.get(USER_SCOPE_KEY, DEFAULT_SCOPE)
        if not isinstance(scope, str):
            raise neta.ConfigError(f"session extra {USER_SCOPE_KEY!r} must be text, not {scope!r}")
        shared = session.extras.get(MEMORY_SCOPE_KEY, "workspace")
        if shared not in ("workspace", "global"):
            raise neta.ConfigError(
                f"session.extras[{MEMORY_SCOPE_KEY!r}] is {shared!r}; use 'workspace' or 'global'"
            )
        return cls.for_scope(scope, workspace=None if shared == "global" else session.workspace)

    def __repr__(self) -> str:
        where = "global" if self.workspace is None else str(self.workspace)
        return f"SQLiteMemoryStore({str(self.path)!r}, workspace={where!r})"

    def save(self, content: str, tags: Sequence[str] = ()) -> neta.Memory:
        """Store a fact (see ``check_entry`` for the limits) and return it with its id."""
        text, cleaned = check_entry(content, tags)
        created = dt.datetime.now(dt.UTC).replace(microsecond=0)
        tags = " ".join(cleaned)
        with self._connection() as db, _transaction(db):
            cursor = db.execute(
                "INSERT INTO memories (content, tags, created, workspace) VALUES (?, ?, ?, ?)",
                (text, tags, created.isoformat(), self._key),
            )
            memory_id = cursor.lastrowid
            if memory_id is None:  # pragma: no cover - an INSERT always sets it
                raise neta.ToolError("the memory database gave the new memory no id")
            db.execute(_INDEX, (memory_id, _searchable(text), _searchable(tags)))
        return neta.Memory(id=memory_id, content=text, tags=cleaned, created=created)

    def recall(self, query: str, limit: int = 5) -> list[neta.Memory]:
        """The memories that best match ``query`` by BM25, best first, at most ``limit``."""
        if limit < 1:
            raise neta.ToolError(f"limit must be at least 1, not {limit}")
        match = fts_query(query)
        with self._connection() as db:
            rows = db.execute(_RECALL, (match, self._key, limit)).fetchall()
        return [_memory(row) for row in rows]

    def forget(self, memory_id: int) -> neta.Memory | None:
        """Delete memory ``memory_id`` and return it (``None``: this store sees no such memory)."""
        if memory_id not in _SQLITE_INTEGERS:  # no row can have it (and SQLite cannot bind it)
            return None
        with self._connection() as db, _transaction(db):
            row = db.execute(
                "SELECT id, content, tags, created FROM memories WHERE id = ? AND workspace = ?",
                (memory_id, self._key),
            ).fetchone()
            if row is not None:
                db.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
                db.execute("DELETE FROM memory_index WHERE rowid = ?", (memory_id,))
        return None if row is None else _memory(row)

    def count(self) -> int:
        """How many memories the store sees (its workspace's, or the global ones)."""
        with self._connection() as db:
            (total,) = db.execute(
                "SELECT count(*) FROM memories WHERE workspace = ?", (self._key,)
            ).fetchone()
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
        """Create the folder and file, switch to WAL and create the tables, once per store."""
        with self._ready_lock:
            if self._ready:
                return
            self._create_private_file()
            with closing(self._open()) as db:
                self._enable_wal(db)
                db.execute("PRAGMA synchronous = NORMAL")
                with _transaction(db):
                    _upgrade(db, self.path)
            self._ready = True

    def _create_private_file(self) -> None:
        """Create the folder (``0o700``) and an empty database file (``0o600``) if missing.

        SQLite gives its ``-wal`` and ``-shm`` files the permissions of the database file.
        """
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise neta.ToolError(
                f"cannot create the memory folder {self.path.parent}: {exc.strerror or exc}"
            ) from exc
        try:
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        except OSError as exc:
            raise neta.ToolError(
                f"cannot create the memory database {self.path}: {exc.strerror or exc}"
            ) from exc

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


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taken at once (waiting for other writers), rolled back on error."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if db.in_transaction:  # SQLite may have rolled back already (a full disk, say)
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _upgrade(db: sqlite3.Connection, path: Path) -> None:
    """Bring the schema to the current version (older memories re-indexed, and made global)."""
    (version,) = db.execute("PRAGMA user_version").fetchone()
    if version == _SCHEMA_VERSION:
        return
    if version > _SCHEMA_VERSION:
        raise neta.ToolError(
            f"the memory database {path} was written by a newer neta (schema version "
            f"{version}; this one reads up to {_SCHEMA_VERSION}); upgrade neta to use it"
        )
    if version < 2:
        for statement in _VERSION_2:
            db.execute(statement)
        rows = db.execute("SELECT id, content, tags FROM memories").fetchall()
        db.executemany(
            _INDEX, ((row_id, _searchable(text), _searchable(tags)) for row_id, text, tags in rows)
        )
    for statement in _VERSION_3:
        db.execute(statement)
    db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")


def _memory(row: tuple[int, str, str, str]) -> neta.Memory:
    memory_id, content, tags, created = row
    return neta.Memory(
        id=memory_id,
        content=content,
        tags=tuple(tags.split()),
        created=dt.datetime.fromisoformat(created),
    )
