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

When a worker dies, its leases lapse; the next heartbeat of a live worker finds the
questions and approvals it left waiting, notes them in the history (the restart rule) and
tells the session's clients ``clarify_resolved`` (``approval_resolved``)
``{server_restarted}``. A later heartbeat finds the run that worker left going, ends the
session's history with ``INTERRUPTED_NOTE`` and tells the clients
``run_finished {outcome: "interrupted"}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from neta.errors import HostError, StorageUnavailable, UnknownSession
from neta.events import RunFinished
from neta.hosting.clarify_bridge import lost_frame
from neta.hosting.cluster.bus import Bus, Command, Frame, id_key
from neta.hosting.cluster.leases import Leases
from neta.hosting.live import Outbox
from neta.hosting.protocol import Command as HubCommand
from neta.hosting.protocol import command_from_json, event_frame
from neta.hosting.questions import QuestionRegistry
from neta.hosting.store import Store, StoredQuestion
from neta.messages import Message, close_interrupted_calls

_log = logging.getLogger("neta.hosting")

INTERRUPTED_REASON = "the server process running this session stopped; what was saved is kept"
"""The reason of the ``run_finished {outcome: "interrupted"}`` of a run whose worker died."""

INTERRUPTED_NOTE = (
    "[interrupted] The server running this conversation stopped before this run finished. "
    "What was done until then is kept above; the request may be only partly done."
)
"""The assistant message that ends the history of a run whose worker died."""

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
        self._sweep: asyncio.Task[None] | None = None
        self._suspects: set[str] = set()
        self._followers: dict[str, set[_Follower]] = {}
        self._wake = asyncio.Event()
        self._replies: dict[str, asyncio.Future[Command]] = {}
        self._working: set[asyncio.Task[None]] = set()

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

    async def close(self) -> None:
        """Publish what is queued, stop the tasks and close the bus."""
        if self._tasks:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._drained(), 2.0)
            tasks = [*self._tasks, *self._working, *([self._sweep] if self._sweep else [])]
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks)
            self._tasks = []
        await self.bus.close()

    async def _drained(self) -> None:
        while not self._outgoing.empty():
            await asyncio.sleep(0.01)

    # -- frames ---------------------------------------------------------------------------------

    def publish(self, session_id: str, item: Frame) -> None:
        """Send ``item`` to every client of the session, on every worker, in order."""
        self._outgoing.put_nowait((session_id, item))

    async def _pump(self) -> None:
        """Publish queued frames in order, all that are waiting in one round trip."""
        while True:
            _stop_if_cancelled()
            batch = [await self._outgoing.get()]
            while not self._outgoing.empty() and len(batch) < _BATCH:
                batch.append(self._outgoing.get_nowait())
            # Whether each session's run is going, as of the batch's end: marked before its
            # frames are published, unmarked after (so a run is never going unmarked).
            going: dict[str, bool] = {}
            for session_id, item in batch:
                kind = item.get("type")
                if kind in ("run_started", "run_finished") and item["data"].get("agent_id") is None:
                    going[session_id] = kind == "run_started"
            while True:
                try:
                    for session_id in (sid for sid, on in going.items() if on):
                        await self.bus.mark_running(session_id, True)
                    await self.bus.publish_many(batch)
                    for session_id in (sid for sid, on in going.items() if not on):
                        await self.bus.mark_running(session_id, False)
                    break
                except StorageUnavailable as exc:  # keep the order: retry this batch first
                    _log.warning("could not publish frames: %s", exc)
                    await asyncio.sleep(0.5)

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
            after = {
                session_id: min((f.last for f in followers), key=id_key)
                for session_id, followers in self._followers.items()
            }
            try:
                frames = await self.bus.read_many(after, _READ_SECONDS)
            except StorageUnavailable as exc:
                _log.warning("could not read frames: %s", exc)
                await asyncio.sleep(0.5)
                continue
            except Exception:  # the reader must go on: without it no client here gets a frame
                _log.exception("reading the session streams failed")
                await asyncio.sleep(0.5)
                continue
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
        if owner is not None and owner != self.me:
            await self._ask(owner, {**command, "sessionId": session_id})
            return True
        return False

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

    def sweep(self) -> None:
        """Look for runs whose worker died (each heartbeat), and tell their clients."""
        if self._tasks and (self._sweep is None or self._sweep.done()):
            self._sweep = asyncio.create_task(self._find_interrupted(), name="neta-bus-sweep")

    async def _find_interrupted(self) -> None:
        store = self.hub.store.run_calls()
        try:
            suspects = set()
            for session_id in await self.bus.running_sessions():
                if await store.owner(session_id) is not None:
                    continue  # its owner is alive
                suspects.add(session_id)
                if session_id not in self._suspects:
                    continue  # a run that just ended is unmarked by then; look again next beat
                if await store.pending_questions(session_id):
                    continue  # the restart rule notes its questions first (at a heartbeat)
                await self._end_interrupted(session_id)
            self._suspects = suspects
        except HostError as exc:
            _log.warning("could not look for interrupted runs: %s", exc)

    async def _end_interrupted(self, session_id: str) -> None:
        """Note the end of a run whose worker died, and tell the session's clients, once."""
        store = self.hub.store.run_calls()
        try:
            if not await store.acquire(session_id, self.me, self.hub.leases.ttl):
                return  # taken meanwhile: its new owner runs it
        except UnknownSession:
            await self.bus.mark_running(session_id, False)
            return
        try:
            # Only the worker that takes the mark away notes and tells it.
            if not await self.bus.mark_running(session_id, False):
                return
            saved = await store.load(session_id)
            if saved is not None:
                history = list(saved.history)
                close_interrupted_calls(history)
                history.append(Message(role="assistant", content=INTERRUPTED_NOTE))
                await store.save(session_id, history, owner=self.me)
            finished = RunFinished(
                session_id=session_id, outcome="interrupted", reason=INTERRUPTED_REASON
            )
            self.publish(session_id, event_frame(session_id, finished))
        finally:
            # nobody held the lease, so nothing of this worker uses the session either
            with contextlib.suppress(StorageUnavailable):  # it lapses on its own
                await store.release(session_id, self.me)
