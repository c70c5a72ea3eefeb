"""A session in memory: its agent session, its client connections, its current run."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from neta.errors import HostError
from neta.hosting.store import StoredQuestion
from neta.messages import Message
from neta.runtime.agent import AgentSession, RunResult


class Outbox(Protocol):
    """Where frames for one client connection go (a queue its writer task drains)."""

    def put(self, frame: dict[str, Any]) -> None:
        """Queue ``frame`` for sending; never blocks."""

    def close(self, code: int, reason: str) -> None:
        """Send what is queued, then close the connection."""


@dataclass(eq=False)
class LiveSession:
    """A session in memory.

    Attributes:
        session: the agent session (context, tools, history).
        outboxes: the connected clients.
        run: the current or last run.
        closed: the session was deleted or dropped from memory: it runs no more.
        saved: the history as last saved (its messages are immutable, so identity tells
            what changed since).
        saved_todos: the todo list revision last saved.
        version: the store's version of the session as this copy last saw it.
        failure: why the current or last run could not be saved, if it could not.
        sink: where the session's frames go instead of ``outboxes`` (the bus of a host with
            several workers, whose connections read them from there).
        delivery: waits until the frames given to ``sink`` so far are on their way to every
            client (raises ``StorageUnavailable`` when they cannot be).
        saving: the session's latest save in progress, if any (each waits for the one before).
        ended: the current run's turn is over and only its last save remains: it can no
            longer be cancelled, and its clients hear of its end once that save is done.
        stopping: set when the server, stopping, cuts the current run: the questions that
            run waited on, lost to the stop (it ends ``interrupted``, with their notes).
    """

    session: AgentSession
    outboxes: set[Outbox] = field(default_factory=set)
    run: asyncio.Task[RunResult] | None = None
    closed: bool = False
    saved: list[Message] = field(default_factory=list)
    saved_todos: int | None = None
    version: int = 0
    failure: HostError | None = None
    sink: Callable[[dict[str, Any]], None] | None = None
    delivery: Callable[[], Awaitable[None]] | None = None
    saving: asyncio.Task[None] | None = None
    ended: bool = False
    stopping: list[StoredQuestion] | None = None

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self.session.session_id

    @property
    def running(self) -> bool:
        """Whether a run is in progress."""
        return self.run is not None and not self.run.done()

    @property
    def busy(self) -> bool:
        """Whether the session runs or has a client (this process then holds its lease)."""
        return self.running or bool(self.outboxes)

    def publish(self, frame: dict[str, Any]) -> None:
        """Send ``frame`` to every client connected to the session."""
        if self.sink is not None:
            self.sink(frame)
            return
        for outbox in list(self.outboxes):
            outbox.put(frame)

    async def delivered(self) -> None:
        """Wait until the frames published so far are on their way to every client.

        Raises:
            StorageUnavailable: they cannot be sent (the bus is unreachable); the session's
                clients that could be told were.
        """
        if self.delivery is not None:
            await self.delivery()

    def todo_items(self) -> list[dict[str, object]]:
        """The session's todo items as plain data (none without a todo store)."""
        todo_store = self.session.context.todo_store
        return todo_store.snapshot().item_dicts() if todo_store is not None else []


@dataclass(eq=False)
class Connection:
    """A client connection to a session (``SessionHub.connect``).

    ``live`` is the session in memory here, or ``None`` when another worker runs it (several
    workers); the connection's frames then come from the bus. ``new`` says the connection
    started the session (nothing of it was ever lost to a restart).
    """

    session_id: str
    live: LiveSession | None
    after: str | None
    outbox: Outbox | None = None
    follower: asyncio.Task[None] | None = None
    new: bool = False
