"""``Bus``: how the worker processes of a host coordinate, and the in-process one.

A session runs in one worker at a time, its *owner*; clients may be connected to any worker.
Who owns a session is the session's lease, kept in the ``Store`` beside the session (so that a
save and the lease check it needs are one transaction; see ``neta.hosting.store``), and so
is which session has a run going (a run whose worker died is found there, whatever became of
the bus). The bus carries what crosses between the workers:

- **events**: ``publish`` appends a session's frame to its stream and returns the frame's id;
  ids grow in the order frames were published. ``read`` returns the frames after an id a
  client saw last, so a client reconnecting (to any worker) with that id misses nothing and
  gets nothing twice from that point: delivery is at least once, with ids to tell repeats.
  A stream keeps its last ``keep_events`` frames; a client further behind reloads the history.
- **commands** routed to a session's owner (``clarify_response``, ``cancel_run``, a REST
  message): ``send`` queues one for a worker, ``receive`` is that worker's inbox.

``LocalBus`` does all of this inside one process (the default: nothing to install). The Redis
bus (``neta.hosting.cluster.redis_bus``) does it for workers on any number of machines.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol

Frame = dict[str, Any]
Command = dict[str, Any]
Published = list[tuple[str | None, str]]
"""Each published frame's ``(previous id, id)`` (``Bus.publish_many``)."""

KEEP_EVENTS = 10_000
"""Frames a session's stream keeps for clients that reconnect."""


def next_id(last: str | None) -> str:
    """The id after ``last`` in a ``LocalBus`` stream (``"1-0"``, ``"2-0"``, ...)."""
    return f"{_seq(last) + 1}-0"


def _seq(event_id: str | None) -> int:
    return 0 if not event_id else int(event_id.split("-", 1)[0])


def id_key(event_id: str | None) -> tuple[int, int]:
    """An event id as a sortable key (``None`` sorts before every id)."""
    if not event_id:
        return (-1, -1)
    first, _, second = event_id.partition("-")
    return (int(first), int(second or 0))


class Bus(Protocol):
    """Event streams and command inboxes shared by the workers of a host."""

    name: str
    """What the bus is, fit to print (``in-process``, ``Redis redis://host:6379/0``)."""

    async def publish(self, session_id: str, frame: Frame) -> str:
        """Append ``frame`` to the session's stream; returns its id."""

    async def publish_many(self, items: list[tuple[str, Frame]]) -> Published:
        """``publish`` each ``(session_id, frame)`` in order, in one round trip.

        Returns each frame's ``(previous id, id)``: the id of the frame before it in its
        session's stream (``None``: none), read in the same step as it was appended, and its
        own. A follower whose last frame is the previous one gets it from its publisher with
        nothing missed.
        """

    async def read(
        self, session_id: str, after: str | None, timeout: float
    ) -> list[tuple[str, Frame]]:
        """The session's frames after id ``after`` (all kept ones when ``None``), oldest first.

        Waits up to ``timeout`` seconds for one when there is none yet; ``[]`` if none came.
        """

    async def read_many(
        self, after: dict[str, str | None], timeout: float, *, skip_own: bool = False
    ) -> list[tuple[str, str, Frame]]:
        """``read`` for several sessions at once: ``(session_id, id, frame)``, each in order.

        ``after`` maps each session to the id read last (``None``: from its oldest frame).
        With ``skip_own``, frames this bus published itself may be left out (its caller handed
        them over as it published them); frames others published never are.
        """

    async def last_id(self, session_id: str) -> str | None:
        """The id of the session's newest frame, or ``None`` if it has none."""

    async def send(self, owner: str, command: Command) -> None:
        """Queue ``command`` for the worker ``owner``."""

    async def receive(self, owner: str, timeout: float) -> Command | None:
        """The next command queued for ``owner``, waiting up to ``timeout`` seconds."""

    async def close(self) -> None:
        """Release the bus's connections."""


@dataclass
class _Stream:
    frames: deque[tuple[str, Frame]] = field(default_factory=lambda: deque(maxlen=KEEP_EVENTS))
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class LocalBus:
    """The bus of a single process: streams and inboxes in memory."""

    name = "in-process"

    def __init__(self, keep_events: int = KEEP_EVENTS) -> None:
        self._keep = keep_events
        self._streams: dict[str, _Stream] = {}
        self._inboxes: dict[str, asyncio.Queue[Command]] = {}
        self._published = asyncio.Event()

    def _stream(self, session_id: str) -> _Stream:
        stream = self._streams.get(session_id)
        if stream is None:
            stream = self._streams[session_id] = _Stream(deque(maxlen=self._keep))
        return stream

    async def publish(self, session_id: str, frame: Frame) -> str:
        """Append ``frame`` to the session's stream; returns its id."""
        stream = self._stream(session_id)
        event_id = next_id(stream.frames[-1][0] if stream.frames else None)
        stream.frames.append((event_id, frame))
        stream.changed.set()
        stream.changed = asyncio.Event()
        self._published.set()
        self._published = asyncio.Event()
        return event_id

    async def publish_many(self, items: list[tuple[str, Frame]]) -> Published:
        """``publish`` each ``(session_id, frame)`` in order; each one's ``(previous id, id)``."""
        published: Published = []
        for session_id, item in items:
            before = await self.last_id(session_id)
            published.append((before, await self.publish(session_id, item)))
        return published

    async def read(
        self, session_id: str, after: str | None, timeout: float
    ) -> list[tuple[str, Frame]]:
        """The session's frames after id ``after``, oldest first, waiting up to ``timeout``."""
        stream = self._stream(session_id)
        after_seq = _seq(after)
        newer = [(i, f) for i, f in stream.frames if _seq(i) > after_seq]
        if newer or timeout <= 0:
            return newer
        try:
            await asyncio.wait_for(stream.changed.wait(), timeout)
        except TimeoutError:
            return []
        return [(i, f) for i, f in stream.frames if _seq(i) > after_seq]

    async def read_many(
        self, after: dict[str, str | None], timeout: float, *, skip_own: bool = False
    ) -> list[tuple[str, str, Frame]]:
        """``read`` for several sessions at once: ``(session_id, id, frame)``, each in order.

        The one bus of every "worker" of a process leaves nothing out (``skip_own``).
        """
        found = self._newer(after)
        if found or timeout <= 0:
            return found
        try:
            await asyncio.wait_for(self._published.wait(), timeout)
        except TimeoutError:
            return []
        return self._newer(after)

    def _newer(self, after: dict[str, str | None]) -> list[tuple[str, str, Frame]]:
        return [
            (session_id, event_id, item)
            for session_id, last in after.items()
            for event_id, item in self._stream(session_id).frames
            if _seq(event_id) > _seq(last)
        ]

    async def last_id(self, session_id: str) -> str | None:
        """The id of the session's newest frame, or ``None`` if it has none."""
        stream = self._streams.get(session_id)
        return stream.frames[-1][0] if stream is not None and stream.frames else None

    async def send(self, owner: str, command: Command) -> None:
        """Queue ``command`` for the worker ``owner``."""
        self._inboxes.setdefault(owner, asyncio.Queue()).put_nowait(command)

    async def receive(self, owner: str, timeout: float) -> Command | None:
        """The next command queued for ``owner``, waiting up to ``timeout`` seconds."""
        inbox = self._inboxes.setdefault(owner, asyncio.Queue())
        try:
            return await asyncio.wait_for(inbox.get(), timeout)
        except TimeoutError:
            return None

    async def close(self) -> None:
        """Nothing to release."""
