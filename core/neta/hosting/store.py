"""``Store``: where a host keeps its sessions, what they wait on, and who runs each of them.

The hub works through this interface only; ``SqliteStore`` (one file in ``NETA_HOME``) is the
engine a single machine needs, and ``PostgresStore`` (``NETA_DATABASE_URL``) the one for
workers on several machines (``neta.hosting.engines`` chooses). Every write is
all-or-nothing; a write or read the engine cannot do raises ``StorageUnavailable``.

**Leases.** A server process runs a session only while it holds the session's lease: a row
naming the owner and when the lease expires. The owner renews its leases (a heartbeat) well
before they expire and releases them when the session goes idle or the process stops; a
process that dies stops renewing, and its leases lapse after ``ttl`` seconds. ``save``
writes only for the lease holder, so a process that lost its lease cannot overwrite a turn
another one took.

**Off the event loop.** The interface is synchronous: the hub opens, claims and releases a
session between awaits, which keeps one copy of a session in memory without locks. An engine
whose calls wait on a network (``remote``: PostgreSQL) must not make the host's event loop wait
with them, so the calls a run makes (its saves, its questions, the heartbeat, the routing of
commands) go through ``off_loop``, which runs them in a thread for such an engine and inline
for a local one (SQLite: a short write to a local file).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, Protocol, TypeVar

from neta.messages import Message

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True)
class StoredSession:
    """A session as saved.

    Attributes:
        session_id: the session's id.
        entry: ``gateway`` or ``service``.
        history: the conversation.
        todos: the todo list as JSON text, or ``None`` if none was saved.
        version: how many times the session was saved (tells a stale copy from a fresh one).
    """

    session_id: str
    entry: str
    history: list[Message]
    todos: str | None
    version: int = 0


@dataclass(frozen=True)
class StoredQuestion:
    """A question that waits (or waited) for a user's answer."""

    request_id: str
    session_id: str
    question: str
    choices: list[str] | None


class Store(Protocol):
    """Sessions, pending questions and leases, shared by every server process of a home."""

    remote: bool
    """Whether calls wait on a network (they are then made off the event loop, ``off_loop``)."""

    def create(self, session_id: str, entry: str) -> None:
        """Record a new, empty session."""

    def exists(self, session_id: str) -> bool:
        """Whether the session was saved (and not deleted)."""

    def load(self, session_id: str) -> StoredSession | None:
        """The saved session, or ``None`` if there is none."""

    def version(self, session_id: str) -> int | None:
        """The session's save count, or ``None`` if there is no such session."""

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

    def delete(self, session_id: str) -> None:
        """Forget a session and everything saved with it (questions and lease included)."""

    def acquire(self, session_id: str, owner: str, ttl: float) -> bool:
        """Take or renew the session's lease for ``ttl`` seconds; false if another holds it.

        Raises:
            UnknownSession: no such session.
        """

    def renew(self, owner: str, ttl: float) -> None:
        """Extend every lease ``owner`` holds by ``ttl`` seconds from now (the heartbeat)."""

    def release(self, session_id: str, owner: str) -> None:
        """Give up the session's lease, if ``owner`` holds it."""

    def owner(self, session_id: str) -> str | None:
        """Who holds the session's lease now (a live, unexpired one), or ``None``."""

    def release_all(self, owner: str) -> None:
        """Give up every lease ``owner`` holds."""

    def add_question(self, question: StoredQuestion) -> None:
        """Remember a question that waits for an answer."""

    def remove_question(self, request_id: str) -> None:
        """Forget a waiting question (answered, timed out or cancelled)."""

    def pending_questions(self, session_id: str) -> list[StoredQuestion]:
        """The session's questions that wait for an answer, oldest first."""

    def lose_questions(self, request_ids: list[str] | None = None) -> list[StoredQuestion]:
        """Mark waiting questions as lost to a restart, and return them.

        ``None`` means every waiting question whose session no live lease covers: the process
        that asked it is gone. Lost questions stay until ``take_lost_questions``.
        """

    def take_lost_questions(self, session_id: str) -> list[StoredQuestion]:
        """The session's questions lost to a restart, forgetting them (they have been told)."""

    def close(self) -> None:
        """Release the engine's resources."""


async def off_loop(store: Store, call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``call(*args, **kwargs)``, one of ``store``'s methods, without holding up the event loop.

    In a thread for a ``remote`` store (the engine is thread-safe), inline for a local one.
    """
    if store.remote:
        return await asyncio.to_thread(call, *args, **kwargs)
    return call(*args, **kwargs)
