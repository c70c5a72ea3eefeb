"""``Cluster``: a hub's part in a host of several worker processes sharing a bus and a store.

With a shared bus (Redis), every frame of a session goes to the session's stream on the bus
instead of straight to this process's connections; every connection, on whichever worker,
reads the stream and gets each frame with its ``eventId``. A connection that comes back with
``?lastEventId=`` resumes after that frame.

A session runs on its owner: the worker holding its lease in the store. A client frame that
acts on a session (a message, a clarify or approval answer, a cancel) reaching another worker
is sent to
the owner's inbox on the bus; a session nobody owns is taken by the worker the frame reached.
The owner answers each command with a reply to the sending worker's inbox, so a refusal
(a wrong request id, a busy session) reaches the one client that sent the command, as if the
session ran where that client is; the session's other clients never see it.

When a worker dies, its leases lapse (at once, when it ran on this machine); the next
heartbeat of a live worker finds the questions and approvals it left waiting, notes them in
the history (the restart rule) and tells the session's clients ``clarify_resolved``
(``approval_resolved``) ``{server_restarted}``; then it finds, in the store, the run that
worker left going, ends the session's history with ``INTERRUPTED_NOTE`` and tells the clients
``run_finished {outcome: "interrupted"}`` (``neta.hosting.cluster.orphans``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from neta.errors import HostError, StorageUnavailable
from neta.hosting.clarify_bridge import lost_frame
from neta.hosting.cluster.bus import Bus, Command, Frame, Published, id_key
from neta.hosting.cluster.leases import Leases
from neta.hosting.live import Outbox
from neta.hosting.protocol import Command as HubCommand
from neta.hosting.protocol import command_from_json, error_frame
from neta.hosting.questions import QuestionRegistry
from neta.hosting.store import Store, StoredQuestion

_log = logging.getLogger("neta.hosting")

_POLL_SECONDS = 2.0

_BATCH = 500
"""The most frames published in one round trip."""

_READ_SECONDS = 0.2
"""How long the reader blocks on the bus; a session followed meanwhile waits at most this."""

REPLY_SECONDS = 15.0
"""How long a worker waits for the owner's reply to a command it routed there."""


def _report_stopped(task: asyncio.Task[None]) -> None:
    """Log a loop of the cluster that ended other than by being cancelled: it is not restarted."""
    if not task.cancelled() and task.exception() is not None:
        _log.error("%s stopped", task.get_name(), exc_info=task.exception())


def _stop_if_cancelled() -> None:
    """End a background loop whose task was cancelled, even if a call it made swallowed that.

    A bus call cancelled halfway may fail as ``StorageUnavailable`` (the connection was cut)
    instead of raising ``CancelledError``, and the loop's retry would then go on for ever.
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


@dataclass(eq=False)
class _Follower:
    """A connection following a session's stream, and the last frame it got."""

    outbox: Outbox
    last: str | None


class _Collector:
    """An outbox a request reads frames from."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Frame] = asyncio.Queue()

    def put(self, frame: Frame) -> None:
        """Keep ``frame``."""
        self.queue.put_nowait(frame)

    def close(self, code: int, reason: str) -> None:
        """Nothing to close."""


class ClusterHub(Protocol):
    """What a ``Cluster`` needs of its hub (a ``SessionHub``) to carry out commands."""

    @property
    def store(self) -> Store:
        """The sessions' store, shared by every worker."""

    @property
    def leases(self) -> Leases:
        """This worker's leases (its name is their owner)."""

    @property
    def questions(self) -> QuestionRegistry:
        """The questions asked here, and the tombstones of closed ones."""

    async def act(self, session_id: str, command: HubCommand, *, forwarded: bool) -> None:
        """Carry out a command another worker sent here (``SessionHub.act``)."""


class Cluster:
    """Carries a hub's frames and commands over ``bus`` to and from the other workers."""

    def __init__(self, hub: ClusterHub, bus: Bus) -> None:
        self.hub = hub
        self.bus = bus
        self._outgoing: asyncio.Queue[tuple[str, Frame]] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._followers: dict[str, set[_Follower]] = {}
        self._wake = asyncio.Event()
        self._replies: dict[str, asyncio.Future[Command]] = {}
        self._working: set[asyncio.Task[None]] = set()
        self._behind: set[str] = set()  # followed sessions with frames only a read gets
        self._queued = self._sent = 0  # frames queued and published so far
        self._waiting: list[tuple[int, asyncio.Future[None]]] = []  # (frames, ``delivered``)
        self._down: StorageUnavailable | None = None  # why the bus takes no frames now
        self._told: dict[str, set[str]] = {"publish": set(), "read": set()}

    @property
    def me(self) -> str:
        """This worker's name (its lease owner name)."""
        return self.hub.leases.owner

    def start(self) -> None:
        """Start publishing frames and serving this worker's inbox (in the running loop)."""
        if not self._tasks:
            self._tasks = [
                asyncio.create_task(self._pump(), name="neta-bus-publish"),
                asyncio.create_task(self._serve_inbox(), name="neta-bus-inbox"),
                asyncio.create_task(self._read_streams(), name="neta-bus-read"),
            ]
            for task in self._tasks:
                task.add_done_callback(_report_stopped)
            self._tasks[0].add_done_callback(self._publisher_stopped)

    def _publisher_stopped(self, _: asyncio.Task[None]) -> None:
        """Frames are no longer published (closing, or a bug): nobody may wait for that."""
        down = StorageUnavailable("this worker no longer publishes frames to the bus")
        self._published_none(down, [])

    async def close(self) -> None:
        """Publish what is queued, stop the tasks and close the bus."""
        if self._tasks:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._outgoing.join(), 2.0)
            tasks = [*self._tasks, *self._working]
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks)
            self._tasks = []
        await self.bus.close()

    async def flush(self, timeout: float) -> None:
        """Wait until the frames published here so far reached this worker's own clients.

        Waits ``timeout`` seconds at most (a bus that cannot be reached holds them).
        """
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._outgoing.join()
                newest = {sid: await self.bus.last_id(sid) for sid in list(self._followers)}
                while any(
                    id_key(follower.last) < id_key(last)
                    for sid, last in newest.items()
                    for follower in self._followers.get(sid, ())
                ):
                    await asyncio.sleep(0.02)

    # -- frames ---------------------------------------------------------------------------------

    def publish(self, session_id: str, item: Frame) -> None:
        """Send ``item`` to every client of the session, on every worker, in order."""
        self._outgoing.put_nowait((session_id, item))
        self._queued += 1

    async def delivered(self, session_id: str) -> None:
        """Wait until the frames published so far are on the bus (a question, before it waits).

        Raises:
            StorageUnavailable: the bus cannot be reached (the session's clients here are told):
                the frames wait, and nobody may be waiting for an answer to what they ask.
        """
        if self._sent >= self._queued or not self._tasks:  # not started: nothing goes yet
            return
        waiter = asyncio.get_running_loop().create_future()
        if self._down is None:
            self._waiting.append((self._queued, waiter))
        else:
            waiter.set_exception(StorageUnavailable(str(self._down)))
        try:
            await waiter
        except StorageUnavailable as exc:
            self._tell_down("publish", [session_id], exc)
            raise

    async def _pump(self) -> None:
        """Publish queued frames in order, all that are waiting in one round trip."""
        while True:
            _stop_if_cancelled()
            batch = [await self._outgoing.get()]
            while not self._outgoing.empty() and len(batch) < _BATCH:
                batch.append(self._outgoing.get_nowait())
            while True:
                try:
                    published = await self.bus.publish_many(batch)
                    break
                except StorageUnavailable as exc:  # keep the order: retry this batch first
                    _log.warning("could not publish frames: %s", exc)
                    self._published_none(exc, [sid for sid, _ in batch])
                    await asyncio.sleep(0.5)
            self._published(len(batch))
            self._hand_over(batch, published)
            for _ in batch:
                self._outgoing.task_done()

    def _published(self, frames: int) -> None:
        """Note that ``frames`` more frames are on the bus; wake what waited for them."""
        self._sent += frames
        self._down = None
        self._told["publish"].clear()
        ready = [w for w in self._waiting if w[0] <= self._sent]
        self._waiting = [w for w in self._waiting if w[0] > self._sent]
        for _, waiter in ready:
            if not waiter.done():
                waiter.set_result(None)

    def _published_none(self, down: StorageUnavailable, sessions: list[str]) -> None:
        """The bus took none of a batch: say so to its sessions' clients here, and to waiters."""
        self._down = down
        self._tell_down("publish", sessions, down)
        waiting, self._waiting = self._waiting, []
        for _, waiter in waiting:
            if not waiter.done():
                waiter.set_exception(StorageUnavailable(str(down)))

    def _tell_down(self, doing: str, sessions: list[str], down: StorageUnavailable) -> None:
        """Tell the clients here of ``sessions`` that the bus failed, straight (not through it).

        Once per session until the bus works again: their frames wait meanwhile.
        """
        told = self._told[doing]
        for session_id in dict.fromkeys(sessions):
            if session_id in told:
                continue
            told.add(session_id)
            for follower in list(self._followers.get(session_id, ())):
                follower.outbox.put(error_frame(session_id, down))

    def _hand_over(self, batch: list[tuple[str, Frame]], published: Published) -> None:
        """Give each frame just published to the followers here that have every frame before it.

        The others (a frame of another worker came between) get it from the reader. Frames
        this worker published are not read back from the bus.
        """
        for (session_id, item), (before, event_id) in zip(batch, published, strict=True):
            for follower in self._followers.get(session_id, ()):
                if follower.last == before:
                    follower.outbox.put({**item, "eventId": event_id})
                    follower.last = event_id
                elif id_key(follower.last) < id_key(event_id):
                    self._behind.add(session_id)
        if self._behind:
            self._wake.set()

    async def last_id(self, session_id: str) -> str | None:
        """The id of the session's newest frame (a new connection follows from there)."""
        return await self.bus.last_id(session_id)

    def follow(self, session_id: str, outbox: Outbox, after: str | None) -> asyncio.Task[None]:
        """Copy the session's frames after id ``after`` to ``outbox`` until the task is cancelled.

        One reader per worker reads the streams of every followed session at once (one
        connection to the bus, however many clients) and hands each frame to its followers.
        """
        follower = _Follower(outbox, after)

        async def follow_until_cancelled() -> None:
            self._followers.setdefault(session_id, set()).add(follower)
            self._wake.set()
            try:
                await asyncio.Event().wait()
            finally:
                followers = self._followers.get(session_id)
                if followers is not None:
                    followers.discard(follower)
                    if not followers:
                        del self._followers[session_id]

        return asyncio.create_task(follow_until_cancelled(), name=f"neta-follow-{session_id}")

    async def _read_streams(self) -> None:
        while True:
            _stop_if_cancelled()
            if not self._followers:
                await self._wake.wait()
            self._wake.clear()
            behind, self._behind = self._behind & self._followers.keys(), set()
            try:
                for session_id in list(behind):
                    caught_up = await self.bus.read(session_id, self._read_from(session_id), 0)
                    self._deliver([(session_id, i, item) for i, item in caught_up])
                    behind.discard(session_id)
                after = {session_id: self._read_from(session_id) for session_id in self._followers}
                self._deliver(await self.bus.read_many(after, _READ_SECONDS, skip_own=True))
            except StorageUnavailable as exc:
                _log.warning("could not read frames: %s", exc)
                self._behind |= behind
                self._tell_down("read", list(self._followers), exc)
                await asyncio.sleep(0.5)
                continue
            except Exception:  # the reader must go on: without it no client here gets a frame
                _log.exception("reading the session streams failed")
                self._behind |= behind
                await asyncio.sleep(0.5)
                continue
            self._told["read"].clear()

    def _read_from(self, session_id: str) -> str | None:
        """The id after which the session's followers here miss frames."""
        lasts = [f.last for f in self._followers.get(session_id, ())]
        return min(lasts, key=id_key) if lasts else None

    def _deliver(self, frames: list[tuple[str, str, Frame]]) -> None:
        """Give frames read from the bus to the followers here that do not have them yet."""
        for session_id, event_id, item in frames:
            for follower in list(self._followers.get(session_id, ())):
                if id_key(event_id) > id_key(follower.last):
                    follower.outbox.put({**item, "eventId": event_id})
                    follower.last = event_id

    # -- commands -------------------------------------------------------------------------------

    async def route(self, session_id: str, command: Command) -> bool:
        """Send a client's command to the worker owning the session, if another one does.

        Returns whether it was carried out there; if not, the caller carries it out here.

        Raises:
            HostError: the owner refused the command, or did not answer within
                ``REPLY_SECONDS`` (``owner_unreachable``).
        """
        owner = await self.hub.store.run_calls().owner(session_id)
        if owner is None or owner == self.me or await self.hub.leases.free_if_gone(owner):
            return False
        await self._ask(owner, {**command, "sessionId": session_id})
        return True

    async def _ask(self, owner: str, command: Command) -> None:
        """Have ``owner`` carry out ``command``; raise its refusal here."""
        ticket = secrets.token_hex(8)
        reply: asyncio.Future[Command] = asyncio.get_running_loop().create_future()
        self._replies[ticket] = reply
        try:
            await self.bus.send(owner, {**command, "replyTo": self.me, "ticket": ticket})
            answer = await asyncio.wait_for(reply, REPLY_SECONDS)
        except TimeoutError:
            message = f"the worker running this session did not answer in {REPLY_SECONDS:g} s"
            _log.warning("%s: worker %s, %s command", message, owner, command.get("type"))
            raise HostError(message, code="owner_unreachable") from None
        finally:
            self._replies.pop(ticket, None)
        error = answer.get("error")
        if isinstance(error, dict):
            raise HostError(str(error.get("message")), code=str(error.get("code")))

    async def run_on_owner(
        self, session_id: str, start: Callable[[], Awaitable[None]]
    ) -> list[Frame]:
        """Start a run of the session wherever it is owned (``start``); its frames, to its end.

        The session's stream is followed from before ``start``, so no frame of the run is
        missed.

        Raises:
            HostError: the owner refused the message (``busy``, ``unknown_request``...).
        """
        collected = _Collector()
        follower = self.follow(session_id, collected, await self.bus.last_id(session_id))
        try:
            await start()
            frames: list[Frame] = []
            while True:
                item = await collected.queue.get()
                if item.get("type") == "error":
                    data = item.get("data", {})
                    raise HostError(str(data.get("message")), code=str(data.get("code")))
                frames.append(item)
                ended = item.get("type") == "run_finished"
                if ended and item.get("data", {}).get("agent_id") is None:
                    return frames
        finally:
            follower.cancel()
            await asyncio.wait({follower})

    async def _serve_inbox(self) -> None:
        while True:
            _stop_if_cancelled()
            try:
                command = await self.bus.receive(self.me, _POLL_SECONDS)
            except StorageUnavailable as exc:
                _log.warning("could not read this worker's commands: %s", exc)
                await asyncio.sleep(0.5)
                continue
            except Exception:  # the inbox must go on: other workers wait on it for replies
                _log.exception("reading this worker's commands failed")
                await asyncio.sleep(0.5)
                continue
            if not isinstance(command, dict):
                if command is not None:
                    _log.warning("a command that is not an object was dropped: %r", command)
                continue
            if command.get("type") == "reply":
                waiting = self._replies.get(str(command.get("ticket")))
                if waiting is not None and not waiting.done():
                    waiting.set_result(command)
                continue
            # each in its own task: a cancel waiting for its run to stop holds up no other
            task = asyncio.create_task(self._obey(command), name="neta-bus-command")
            self._working.add(task)
            task.add_done_callback(self._working.discard)

    async def _obey(self, command: Command) -> None:
        """Carry out a command another worker sent, and reply to that worker."""
        session_id = str(command.get("sessionId", ""))
        reply: Command = {"type": "reply", "ticket": command.get("ticket")}
        try:
            await self.hub.act(session_id, command_from_json(command), forwarded=True)
        except HostError as exc:
            reply["error"] = {"code": exc.code, "message": str(exc)}
        except Exception:  # one bad command must not stop the inbox
            _log.exception("command for session %s failed", session_id)
            reply["error"] = {"code": "internal", "message": "the server failed on this command"}
        sender = command.get("replyTo")
        if sender:
            try:
                await self.bus.send(str(sender), reply)
            except StorageUnavailable as exc:  # the sender times out and says so
                _log.warning("could not reply to worker %s: %s", sender, exc)

    # -- a worker that died ------------------------------------------------------------------

    def tell_lost(self, session_id: str, lost: list[StoredQuestion]) -> None:
        """Tell the session's clients that questions of a worker that died are over.

        This worker remembers them: an answer that reaches it late is refused as expired.
        """
        for question in lost:
            self.hub.questions.remember(question.request_id, session_id, "server_restarted")
            self.publish(session_id, lost_frame(question))
