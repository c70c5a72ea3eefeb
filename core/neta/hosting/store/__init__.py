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

**Runs.** Which session has a run going is kept here too, beside the session, never only in a
bus: a run marks its session when it starts (``save(..., run="going")``) and clears the mark
with its last save (``run="ended"``), in that save's transaction, so a run whose end was saved
is never taken for one cut short. A mark that outlives its owner's lease is a run whose process
died (``interrupted_runs``); the process that ends it for its clients saves its note with
``run="interrupted"`` when none of them could be told yet (``take_interrupted`` tells the next).

**Run calls.** The interface is synchronous (scripts, tests and the start of a process use
it). A server's calls go through ``run_calls()`` instead, the same operations as coroutines:
opening, claiming and releasing a session, a run's saves and questions, the lease heartbeat,
the routing of commands. A local engine (SQLite, a short write to a local file) makes them
inline (``InlineCalls``); an engine on a network (PostgreSQL) makes them on async
connections, so that the event loop never waits on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from neta.messages import Message


@dataclass(frozen=True)
class StoredSession:
    """A session as saved.

    Attributes:
        session_id: the session's id.
        entry: ``gateway`` or ``service``.
        history: the conversation.
        todos: the todo list as JSON text, or ``None`` if none was saved.
        version: how many times the session was saved (tells a stale copy from a fresh one).
        run_owner: the lease owner whose run of the session is going (marked, not yet ended),
            or ``None``.
    """

    session_id: str
    entry: str
    history: list[Message]
    todos: str | None
    version: int = 0
    run_owner: str | None = None


RunMark = Literal["going", "ended", "interrupted"]
"""What a save says of the session's run: it is ``going`` (the saver's), it ``ended``, or it
was ``interrupted`` (its process died) and no client has been told yet."""


@dataclass(frozen=True)
class StoredQuestion:
    """A question that waits (or waited) for a user's answer.

    Attributes:
        request_id: the question's id (what an answer names).
        session_id: the session that asked it.
        question: its text (for an approval, the whole request as text).
        choices: the answers offered, if any.
        approval: for a tool call waiting for approval, the request as clients get it in
            ``approval_request`` (its ``callId``, ``tool``, ``preview``...); ``None`` for a
            clarify question.
    """

    request_id: str
    session_id: str
    question: str
    choices: list[str] | None
    approval: dict[str, Any] | None = None


class Store(Protocol):
    """Sessions, pending questions and leases, shared by every server process of a home."""

    remote: bool
    """Whether calls wait on a network (a run then saves through ``run_calls`` in the
    background, and its tools wait for the save)."""

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
        run: RunMark | None = None,
    ) -> int:
        """Replace the history from position ``start`` on (and the todo list, unless ``None``).

        ``run`` marks the session's run (``None`` leaves the mark as it is). Returns the
        session's new version.

        Raises:
            SessionOwned: ``owner`` does not hold the session's lease.
        """

    def delete(self, session_id: str) -> None:
        """Forget a session and everything saved with it (questions and lease included)."""

    def delete_idle(self, ttl: float) -> list[str]:
        """Forget every session saved last over ``ttl`` seconds ago that nobody leases.

        As ``delete`` forgets one. Returns the ids of those forgotten.
        """

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

    def lease_owners(self) -> list[str]:
        """Every owner holding a live (unexpired) lease."""

    def interrupted_runs(self) -> list[str]:
        """The sessions whose run is marked going while no live lease covers them."""

    def take_interrupted(self, session_id: str) -> bool:
        """Whether the session's last run was interrupted untold; it counts as told from now."""

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

    def run_calls(self) -> RunCalls:
        """The calls a run makes, as coroutines that do not hold up the event loop."""

    def close(self) -> None:
        """Release the engine's resources."""


class RunCalls(Protocol):
    """The ``Store`` calls a server makes, as coroutines (``Store.run_calls``)."""

    async def create(self, session_id: str, entry: str) -> None:
        """``Store.create``."""

    async def version(self, session_id: str) -> int | None:
        """``Store.version``."""

    async def delete(self, session_id: str) -> None:
        """``Store.delete``."""

    async def delete_idle(self, ttl: float) -> list[str]:
        """``Store.delete_idle``."""

    async def lose_questions(self, request_ids: list[str] | None = None) -> list[StoredQuestion]:
        """``Store.lose_questions``."""

    async def take_lost_questions(self, session_id: str) -> list[StoredQuestion]:
        """``Store.take_lost_questions``."""

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
        """``Store.save``."""

    async def load(self, session_id: str) -> StoredSession | None:
        """``Store.load``."""

    async def exists(self, session_id: str) -> bool:
        """``Store.exists``."""

    async def add_question(self, question: StoredQuestion) -> None:
        """``Store.add_question``."""

    async def remove_question(self, request_id: str) -> None:
        """``Store.remove_question``."""

    async def pending_questions(self, session_id: str) -> list[StoredQuestion]:
        """``Store.pending_questions``."""

    async def acquire(self, session_id: str, owner: str, ttl: float) -> bool:
        """``Store.acquire``."""

    async def renew(self, owner: str, ttl: float) -> None:
        """``Store.renew``."""

    async def release(self, session_id: str, owner: str) -> None:
        """``Store.release``."""

    async def owner(self, session_id: str) -> str | None:
        """``Store.owner``."""

    async def release_all(self, owner: str) -> None:
        """``Store.release_all``."""

    async def lease_owners(self) -> list[str]:
        """``Store.lease_owners``."""

    async def interrupted_runs(self) -> list[str]:
        """``Store.interrupted_runs``."""

    async def take_interrupted(self, session_id: str) -> bool:
        """``Store.take_interrupted``."""

    async def close(self) -> None:
        """Release what the calls hold (their connections), in the event loop."""


class InlineCalls:
    """The run calls of a local store: its own (short, local) calls, made inline."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def create(self, session_id: str, entry: str) -> None:
        """``Store.create``."""
        self._store.create(session_id, entry)

    async def version(self, session_id: str) -> int | None:
        """``Store.version``."""
        return self._store.version(session_id)

    async def delete(self, session_id: str) -> None:
        """``Store.delete``."""
        self._store.delete(session_id)

    async def delete_idle(self, ttl: float) -> list[str]:
        """``Store.delete_idle``."""
        return self._store.delete_idle(ttl)

    async def lose_questions(self, request_ids: list[str] | None = None) -> list[StoredQuestion]:
        """``Store.lose_questions``."""
        return self._store.lose_questions(request_ids)

    async def take_lost_questions(self, session_id: str) -> list[StoredQuestion]:
        """``Store.take_lost_questions``."""
        return self._store.take_lost_questions(session_id)

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
        """``Store.save``."""
        return self._store.save(
            session_id, messages, owner=owner, start=start, todos=todos, run=run
        )

    async def load(self, session_id: str) -> StoredSession | None:
        """``Store.load``."""
        return self._store.load(session_id)

    async def exists(self, session_id: str) -> bool:
        """``Store.exists``."""
        return self._store.exists(session_id)

    async def add_question(self, question: StoredQuestion) -> None:
        """``Store.add_question``."""
        self._store.add_question(question)

    async def remove_question(self, request_id: str) -> None:
        """``Store.remove_question``."""
        self._store.remove_question(request_id)

    async def pending_questions(self, session_id: str) -> list[StoredQuestion]:
        """``Store.pending_questions``."""
        return self._store.pending_questions(session_id)

    async def acquire(self, session_id: str, owner: str, ttl: float) -> bool:
        """``Store.acquire``."""
        return self._store.acquire(session_id, owner, ttl)

    async def renew(self, owner: str, ttl: float) -> None:
        """``Store.renew``."""
        self._store.renew(owner, ttl)

    async def release(self, session_id: str, owner: str) -> None:
        """``Store.release``."""
        self._store.release(session_id, owner)

    async def owner(self, session_id: str) -> str | None:
        """``Store.owner``."""
        return self._store.owner(session_id)

    async def release_all(self, owner: str) -> None:
        """``Store.release_all``."""
        self._store.release_all(owner)

    async def lease_owners(self) -> list[str]:
        """``Store.lease_owners``."""
        return self._store.lease_owners()

    async def interrupted_runs(self) -> list[str]:
        """``Store.interrupted_runs``."""
        return self._store.interrupted_runs()

    async def take_interrupted(self, session_id: str) -> bool:
        """``Store.take_interrupted``."""
        return self._store.take_interrupted(session_id)

    async def close(self) -> None:
        """Nothing of its own to release (the store closes with ``Store.close``)."""
