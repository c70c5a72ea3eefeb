"""``Conversations``: every ``neta run`` and ``neta chat`` kept as a session in ``NETA_HOME``.

The history lives in the host apps' ``Store`` (``NETA_HOME/neta.db``), saved through its
public methods under a lease as any host process does. What ``neta logs`` lists (workspace,
first prompt, outcome, tokens, the model) is kept beside it, in a ``cli_runs`` table of the
same file. The model a conversation talks to is kept so that going on with it (``-c``,
``--session``) asks the same one; its API key never is.

A stored history never ends with a message of the user's that the model did not answer (a run
that failed or was stopped before the model's reply): the next message would follow it, and
the model would read both.
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

from neta.errors import ConfigError, StorageUnavailable, os_reason
from neta.home import neta_home, usable_home
from neta.hosting.store.sqlite import SqliteStore
from neta.messages import Message
from neta.safe_url import safe_url

_LEASE_SECONDS = 24 * 3600.0  # a terminal run holds its session until it ends
_SCHEMA = """
CREATE TABLE IF NOT EXISTS cli_runs (
    session_id TEXT PRIMARY KEY,
    workspace TEXT NOT NULL,
    command TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    first_prompt TEXT NOT NULL,
    outcome TEXT NOT NULL,
    question TEXT NOT NULL DEFAULT '',
    turns INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    provider TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    base_url TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS cli_runs_by_workspace ON cli_runs (workspace, updated);
"""
_ADDED_COLUMNS = ("provider", "model", "base_url", "reason")  # a file written before they were kept


@dataclass(frozen=True)
class ModelChoice:
    """The model a conversation talks to.

    Attributes:
        provider: the provider's name (``openai``, ``anthropic``...).
        model: the model's name as the provider was asked for it.
        base_url: the API root given with ``--base-url``; empty when none was (the provider's
            environment variable or default then decides), or when it carries credentials,
            which are never stored.
    """

    provider: str
    model: str
    base_url: str = ""

    @classmethod
    def of(cls, provider: str, model: str, base_url: str | None) -> ModelChoice:
        """The choice to store: a base URL holding a password or token is left out."""
        url = base_url or ""
        return cls(provider, model, url if safe_url(url) == url else "")


@dataclass(frozen=True)
class Conversation:
    """One stored CLI conversation, as ``neta logs`` lists it.

    Attributes:
        session_id: the session's id (``--session``).
        workspace: the workspace it ran in.
        command: ``run`` or ``chat``.
        created: when it started (seconds since the epoch).
        updated: when it last ran.
        first_prompt: the first thing the user said.
        outcome: how its last run ended (``awaiting_input`` when a question is open).
        question: the open question, when the outcome is ``awaiting_input``.
        turns: model turns, all runs together.
        input_tokens: input tokens, all runs together (its sub-agents' too).
        output_tokens: output tokens, all runs together (its sub-agents' too).
        provider: the provider it talks to (empty if stored before providers were kept).
        model: the model it talks to.
        base_url: the API root given with ``--base-url``, if one was.
        reason: why its last run ended as it did, when it did not simply complete.
    """

    session_id: str
    workspace: str
    command: str
    created: float
    updated: float
    first_prompt: str
    outcome: str
    question: str
    turns: int
    input_tokens: int
    output_tokens: int
    provider: str = ""
    model: str = ""
    base_url: str = ""
    reason: str = ""

    @property
    def model_choice(self) -> ModelChoice | None:
        """The model it talks to, or ``None`` if none was stored."""
        if not self.provider:
            return None
        return ModelChoice(self.provider, self.model, self.base_url)

    def as_json(self) -> dict[str, object]:
        """The conversation as plain JSON data."""
        return asdict(self)


class Conversations:
    """The CLI's conversations in ``home`` (default ``NETA_HOME``)."""

    def __init__(self, home: Path | None = None) -> None:
        path = usable_home(home or neta_home()) / "neta.db"
        try:
            self.store = SqliteStore(path)
            self._db = sqlite3.connect(path, isolation_level=None)
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(cli_runs)")}
            for column in _ADDED_COLUMNS:
                if column not in columns:
                    self._db.execute(
                        f"ALTER TABLE cli_runs ADD COLUMN {column} TEXT NOT NULL DEFAULT ''"
                    )
        except (OSError, sqlite3.Error) as exc:
            reason = os_reason(exc) if isinstance(exc, OSError) else str(exc)
            raise StorageUnavailable(
                f"cannot open the conversation store {path}: {reason} (set NETA_HOME to a "
                "writable directory)"
            ) from exc
        self.owner = f"cli-{os.getpid()}-{uuid.uuid4().hex[:8]}"

    def close(self) -> None:
        """Release the leases taken and the database."""
        self.store.release_all(self.owner)
        self.store.close()
        self._db.close()

    def start(self, workspace: Path, command: str, prompt: str, model: ModelChoice) -> str:
        """Record a new conversation with the model it talks to, and take its lease.

        Returns its id.
        """
        session_id = uuid.uuid4().hex
        self.store.create(session_id, "cli")
        self.store.acquire(session_id, self.owner, _LEASE_SECONDS)
        now = time.time()
        self._db.execute(
            "INSERT INTO cli_runs (session_id, workspace, command, created, updated, "
            "first_prompt, outcome, provider, model, base_url) "
            "VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)",
            (session_id, str(workspace), command, now, now, prompt, *_fields(model)),
        )
        return session_id

    def resume(self, session_id: str) -> tuple[Conversation, list[Message]]:
        """A stored conversation and its history, its lease taken.

        A history stored by an earlier version may end with messages of the user's that the
        model never answered; they are left out (the next message would follow them).

        Raises:
            ConfigError: there is no such conversation, or another process runs it now.
        """
        found = self.get(session_id)
        saved = self.store.load(found.session_id)
        if saved is None:
            raise ConfigError(f"conversation {session_id!r} has no stored history")
        if not self.store.acquire(found.session_id, self.owner, _LEASE_SECONDS):
            raise ConfigError(
                f"conversation {found.session_id} is running in another process; wait for it"
            )
        return found, answered(saved.history)

    def latest(self, workspace: Path) -> str | None:
        """The id of the conversation last run in ``workspace``, if any."""
        row = self._db.execute(
            "SELECT session_id FROM cli_runs WHERE workspace = ? ORDER BY updated DESC LIMIT 1",
            (str(workspace),),
        ).fetchone()
        return None if row is None else str(row[0])

    def get(self, session_id: str) -> Conversation:
        """The conversation with this id (or an unambiguous prefix of it).

        Raises:
            ConfigError: no conversation, or several, match.
        """
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM cli_runs WHERE session_id LIKE ? || '%' LIMIT 2",
            (session_id,),
        ).fetchall()
        if len(rows) != 1:
            what = "no conversation" if not rows else "several conversations"
            raise ConfigError(f"{what} with id {session_id!r}; see `neta logs` for the ids")
        return Conversation(*rows[0])

    def recent(self, limit: int = 20, workspace: Path | None = None) -> list[Conversation]:
        """The conversations last run, newest first (only ``workspace``'s, when given)."""
        where, args = ("WHERE workspace = ?", [str(workspace)]) if workspace else ("", [])
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM cli_runs {where} ORDER BY updated DESC LIMIT ?",
            [*args, limit],
        ).fetchall()
        return [Conversation(*row) for row in rows]

    def history(self, session_id: str) -> list[Message]:
        """The stored messages of a conversation."""
        saved = self.store.load(session_id)
        return [] if saved is None else saved.history

    def save(
        self,
        session_id: str,
        history: list[Message],
        *,
        outcome: str,
        question: str = "",
        reason: str = "",
        turns: int = 0,
        input_tokens: int = 0,
        output_tokens: int = 0,
        model: ModelChoice | None = None,
    ) -> None:
        """Save the history and how the last run ended (adding its turns and tokens).

        The history is saved without the user's messages at its end that the model did not
        answer. ``model``, when given, is the model the conversation talks to from now on.
        """
        self.store.save(session_id, answered(history), owner=self.owner)
        self._db.execute(
            "UPDATE cli_runs SET updated = ?, outcome = ?, question = ?, reason = ?, "
            "turns = turns + ?, input_tokens = input_tokens + ?, output_tokens = output_tokens + ? "
            "WHERE session_id = ?",
            (
                time.time(), outcome, question, reason, turns, input_tokens, output_tokens,
                session_id,
            ),
        )  # fmt: skip
        if model is not None:
            self._db.execute(
                "UPDATE cli_runs SET provider = ?, model = ?, base_url = ? WHERE session_id = ?",
                (*_fields(model), session_id),
            )


def answered(history: list[Message]) -> list[Message]:
    """``history`` without the user's messages at its end that the model did not answer."""
    end = len(history)
    while end and history[end - 1].role == "user":
        end -= 1
    return history[:end]


def _fields(model: ModelChoice) -> tuple[str, str, str]:
    return model.provider, model.model, model.base_url


_COLUMNS = (
    "session_id, workspace, command, created, updated, first_prompt, outcome, question, "
    "turns, input_tokens, output_tokens, provider, model, base_url, reason"
)
