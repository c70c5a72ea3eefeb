"""The live sessions of a host process: runs, connections, questions and persistence.

The WebSocket gateway and the REST service both work through one ``SessionHub``: they open
sessions and connections on it, act on a session with ``act`` (a message, an answer, an
approval, a cancel: here, or on the worker running the session) and read its frames; they
never reach into its store, bus or leases. A session
is always on disk (``Store``) and in memory while it is used: while it runs or has a
client, and afterwards among the most recently used idle ones. A session's history is saved
when a run starts, before each model call, before a turn's tool calls run, when the todo list
changes, when a question is asked and when the run ends, so neither a restart nor a crash loses
the conversation.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from neta.errors import (
    Busy,
    SessionDeleted,
    SessionOwned,
    StorageUnavailable,
    UnknownSession,
)
from neta.hosting import readiness
from neta.hosting.auth import refusal, token_ok
from neta.hosting.clarify_bridge import ClarifyBridge
from neta.hosting.cluster.bus import LocalBus
from neta.hosting.cluster.cluster import Cluster
from neta.hosting.cluster.leases import Leases
from neta.hosting.cluster.orphans import adopt_orphans
from neta.hosting.commands import carry_out, send_and_wait
from neta.hosting.config import HostConfig
from neta.hosting.drain import Drain, stopping_error
from neta.hosting.interrupted import INTERRUPTED_REASON, end_interrupted, interrupted_frame
from neta.hosting.live import Connection, LiveSession, Outbox
from neta.hosting.metered import TimedProvider, counting_failures
from neta.hosting.metrics import HostMetrics
from neta.hosting.parts import agent_of, bus_of, check_config, provider_of, store_of
from neta.hosting.protocol import (
    ApprovalAnswers,
    Command,
    MessageOut,
    PendingQuestion,
    SendAndWait,
    SessionReady,
    error_frame,
    frame,
)
from neta.hosting.questions import Answer, QuestionRegistry
from neta.hosting.runs import run_live
from neta.hosting.save_points import SessionSaver
from neta.hosting.session_guards import SessionGuards
from neta.hosting.store import Store, StoredQuestion, StoredSession
from neta.hosting.waiting_calls import check_waiting
from neta.messages import Message, waiting_approvals
from neta.permissions import ApprovalAnswer
from neta.plugins import create_plugin_manager
from neta.providers.base import Provider
from neta.providers.client_pool import ClientPool
from neta.runtime.agent import RunResult
from neta.todos import InMemoryTodoStore

HostEntry = Literal["gateway", "service"]

_log = logging.getLogger("neta.hosting")

QUESTION_DEADLINE_MARGIN = 5.0
"""Seconds a session's ``clarify_timeout`` exceeds the hub's own question deadline.

The hub settles an unanswered question itself at ``clarify_timeout`` (telling every client it
timed out and keeping the stored question consistent); the clarify tool's own wait must end
later, so that it only ever backs the hub up and never cancels a question the hub would settle.
"""


def _restored_todos(saved: str | None) -> InMemoryTodoStore:
    """The todo store saved as ``saved`` (JSON text), or an empty one when none was saved."""
    return InMemoryTodoStore.from_json(saved) if saved else InMemoryTodoStore()


@dataclass(frozen=True)
class SessionView:
    """A session as read by a client: its history, todo items, and whether it runs."""

    session_id: str
    history: list[Message]
    todos: list[dict[str, object]]
    running: bool


class SessionHub:
    """Creates, finds, runs and ends sessions for the gateway and the REST service."""

    def __init__(self, config: HostConfig) -> None:
        self.config = config
        self.pm = config.plugin_manager or create_plugin_manager()
        self.agent = agent_of(config, self.pm)  # a bad provider or toolset fails before the store
        self.metrics = HostMetrics(
            sessions=lambda: len(self._live), questions=lambda: self.questions.pending_count()
        )
        self.store: Store = counting_failures(store_of(config), self.metrics.store_failed)
        bus = bus_of(config)
        shared = not isinstance(bus, LocalBus)
        self.bus = counting_failures(bus, self.metrics.bus_failed) if shared else bus
        self.cluster = Cluster(self, self.bus) if shared else None
        self.leases = Leases(self.store, config.lease_seconds, on_beat=lambda: adopt_orphans(self))
        self.saver = SessionSaver(self.store, self.leases.owner)
        self.questions: QuestionRegistry = QuestionRegistry()  # (read by the metrics above)
        self.clients = ClientPool()  # one model-API client per configuration, for every session
        self.clarify = ClarifyBridge(
            self.questions,
            self.store,
            config.clarify_timeout,
            self.saver.save_async,
            self.saver.fail,
        )
        self._live: dict[str, LiveSession] = {}
        self._idle: OrderedDict[str, None] = OrderedDict()
        self.guards = SessionGuards()
        self._releasing: dict[str, asyncio.Task[None]] = {}
        self.lost_at_start: list[StoredQuestion] = []
        self.started = False  # see ``start``
        self.drain = Drain(self)
        self._cleaner: asyncio.Task[None] | None = None  # deletes idle sessions (session_ttl)
        self._unused_timers: dict[str, asyncio.Task[None]] = {}  # see ``disconnect``

    def refusal(
        self,
        *,
        authorization: str | None,
        query_token: str | None = None,
        origin: str | None = None,
        host: str | None = None,
        server: tuple[str, int | None] | None = None,
        scraping: bool = False,
    ) -> tuple[int, str] | None:
        """Why a request may not reach the hub's sessions (an HTTP status and a message).

        ``None`` when it may: its token, browser origin, ``Host`` and arrival address are
        checked against the hub's configuration (``neta.hosting.auth.refusal`` tells what
        each argument is). ``scraping``: the request is for the metrics, which the metrics
        token (``HostConfig.metrics_token``) opens too.
        """
        refused = refusal(
            self.config.token,
            authorization=authorization,
            query_token=query_token,
            origin=origin,
            host=host,
            server=server,
        )
        scraper = self.config.metrics_token if scraping else None
        if refused is not None and scraper and token_ok(scraper, query_token, authorization):
            return None
        return refused

    def in_use(self, session_id: str) -> bool:
        """Whether the session runs or has a client here (this process then keeps its lease)."""
        live = self._live.get(session_id)
        return live is not None and live.busy

    def sessions_running(self) -> list[LiveSession]:
        """The sessions whose run is going here."""
        return [live for live in self._live.values() if live.running]

    async def start(self) -> None:
        """Start the hub's background work (in the server's event loop).

        Questions left waiting by a process that is gone can no longer be answered live: they
        are noted now (``lost_at_start``), and their sessions continue REST-style (the next
        message is the answer); the runs it left going are ended (``adopt_orphans``).
        Once started, calling it again does nothing: ``neta serve`` starts the hub before it
        serves (a hub that cannot start is then a one-line error), the app's lifespan after.
        """
        if self.started:
            return
        self.lost_at_start = await adopt_orphans(self)
        self.started = True
        if self.cluster is not None:
            self.cluster.start()
            self.leases.start()
        if self.config.session_ttl is not None:
            self._cleaner = asyncio.create_task(
                self._delete_idle_sessions_periodically(self.config.session_ttl),
                name="neta-session-ttl",
            )

    def _new_provider(self) -> Provider:
        return TimedProvider(provider_of(self.config, self.pm), self.metrics.model_call)

    async def unready(self) -> str | None:
        """Why this server should get no new clients now (``/readyz``), or ``None``."""
        if self.drain.begun:
            return "the server is stopping"
        return await readiness.unready(self.store, None if self.cluster is None else self.bus)

    # -- sessions ---------------------------------------------------------------------------

    async def create(self, entry: HostEntry) -> LiveSession:
        """Start a new session; its id is random and unguessable.

        The caller attaches a client, starts a run, or calls ``release``.
        """
        live = self._open(entry, session_id=None, history=(), todos=None)
        try:
            async with self.guards.hold(live.session_id):
                await self.store.run_calls().create(live.session_id, entry)
                await self.leases.claim_async(live.session_id)
                await self.saver.save_async(live)
        except BaseException:
            self._live.pop(live.session_id, None)
            live.closed = True
            self.agent.end_session(live.session)
            raise
        return live

    async def get(self, session_id: str) -> LiveSession:
        """The live session ``session_id``, loaded from disk if needed.

        The caller attaches a client, starts a run, or calls ``release``, before it awaits
        anything: until then the session is not dropped from memory. While it waits on the
        store it holds the session's guard: another connection or request opening the same
        session meanwhile waits, and then gets the same copy.

        Raises:
            UnknownSession: no such session exists.
            SessionOwned: another server process runs the session now.
        """
        calls = self.store.run_calls()
        async with self.guards.hold(session_id):
            await self.leases.claim_async(session_id)
            live = self._live.get(session_id)
            try:
                if live is not None and not live.busy:
                    version = await calls.version(session_id)
                    if self._live.get(session_id) is not live:
                        live = None  # dropped from memory meanwhile
                    elif version != live.version:
                        self._drop(live)  # another process took a turn since: this copy is stale
                        live = None
                if live is None:
                    saved = await calls.load(session_id)
                    if saved is None:
                        raise UnknownSession(session_id)
                    if saved.run_owner is not None:  # a run no process runs (we hold the lease)
                        saved = await end_interrupted(calls, self.leases.owner, saved, self.cluster)
                    live = self._loaded(saved)
            except BaseException:
                if live is None or not live.busy:
                    await self.leases.release_async(session_id)
                raise
        self._idle.pop(session_id, None)
        return live

    def _loaded(self, saved: StoredSession) -> LiveSession:
        entry: HostEntry = "gateway" if saved.entry == "gateway" else "service"
        live = self._open(entry, saved.session_id, saved.history, saved.todos)
        live.saved = list(live.session.history)
        live.version = saved.version
        return live

    async def view(self, session_id: str) -> SessionView:
        """The session's history and todo items: from memory while it is used here, else disk.

        Raises:
            UnknownSession: no such session exists.
        """
        live = self._live.get(session_id)
        if live is not None and live.busy:
            history = list(live.session.history)
            return SessionView(session_id, history, live.todo_items(), live.running)
        saved = await self.store.run_calls().load(session_id)
        if saved is None:
            raise UnknownSession(session_id)
        items = _restored_todos(saved.todos).snapshot().item_dicts()
        return SessionView(session_id, saved.history, items, running=False)

    def _open(
        self, entry: HostEntry, session_id: str | None, history: Sequence[Any], todos: str | None
    ) -> LiveSession:
        holder: list[LiveSession] = []
        live_channel = entry == "gateway"
        clarify = self.clarify.clarify_for(holder) if live_channel else None
        todo_store = _restored_todos(todos)
        session = self.agent.new_session(
            session_id=session_id,
            entry=entry,
            clarify=clarify,
            # a gateway session asks its clients and waits; a REST one leaves the call for
            # the next message to answer
            approve=self.clarify.approve_for(holder) if live_channel else None,
            defer_approvals=not live_channel,
            history=history,
            todo_store=todo_store,
            provider=self._new_provider(),
            clarify_timeout=self.config.clarify_timeout + QUESTION_DEADLINE_MARGIN,
        )
        live = LiveSession(session, saved_todos=todo_store.snapshot().revision)
        if self.cluster is not None:
            live.sink = functools.partial(self.cluster.publish, session.session_id)
            live.delivery = functools.partial(self.cluster.delivered, session.session_id)
        session.checkpoint = functools.partial(self.saver.save_async, live)
        holder.append(live)
        self._live[session.session_id] = live
        return live

    # -- connections ------------------------------------------------------------------------

    async def connect(self, wanted: str | None, last_event_id: str | None) -> Connection:
        """Open the session a new client connection attaches to: ``wanted``, or a new one.

        ``last_event_id`` is the last frame the client got (several workers): it follows the
        session's frames after it, else from now. The caller then calls ``listen``.

        Raises:
            HostError: no such session, or another process runs it and there is no shared bus.
        """
        after = last_event_id
        if self.cluster is not None and wanted and after is None:
            after = await self.cluster.last_id(wanted)
        if not wanted:
            live: LiveSession | None = await self.create("gateway")
        else:
            try:
                live = await self.get(wanted)
            except SessionOwned:
                if self.cluster is None or not await self.store.run_calls().exists(wanted):
                    raise
                live = None  # another worker runs it
        session_id = live.session_id if live is not None else wanted or ""
        return Connection(session_id, live, after, new=not wanted)

    async def listen(self, connection: Connection, outbox: Outbox) -> None:
        """Send the session's frames to ``outbox`` from now on, ``session_ready`` first.

        Until ``disconnect``, the session stays in memory here (when it runs here).
        """
        live = connection.live
        # what the session waits on (as saved, when another worker runs it)
        ready = await self.session_ready(connection.session_id, here=live is not None)
        outbox.put(frame("session_ready", connection.session_id, ready))
        connection.outbox = outbox
        if live is not None:
            self.attach(live, outbox)  # before any await, so the session stays in memory
        if self.cluster is not None:
            connection.follower = self.cluster.follow(
                connection.session_id, outbox, connection.after
            )
        self.drain.opened(connection)

    async def disconnect(self, connection: Connection) -> None:
        """Stop sending to a client that left.

        A session a connection opened in which nothing was ever said is deleted when its
        last client has been gone ``unused_session_seconds`` (a client whose connection
        dropped may come back to it meanwhile): connections that come and go without a word
        leave nothing behind.
        """
        self.drain.closed(connection)
        live = connection.live
        if live is not None and connection.outbox is not None:
            live.outboxes.discard(connection.outbox)
            if self._unused(live) and live.session_id not in self._unused_timers:
                self._unused_timers[live.session_id] = asyncio.create_task(
                    self._forget_unused(live), name="neta-unused-session"
                )
            self.release(live)
        if connection.follower is not None:
            connection.follower.cancel()
            await asyncio.wait({connection.follower})

    def _unused(self, live: LiveSession) -> bool:
        """Whether ``live`` is a connection's session, idle, in which nothing ever ran."""
        return (
            live.session.context.entry == "gateway"
            and live.run is None
            and not live.session.history
            and self._idle_now(live)
        )

    async def _forget_unused(self, live: LiveSession, *, now: bool = False) -> None:
        """Delete an unused session (``_unused``) from the store and from memory.

        Once it has stayed unused for ``unused_session_seconds``, or ``now``.
        """
        try:
            if not now:
                await asyncio.sleep(self.config.unused_session_seconds)
            async with self.guards.hold(live.session_id):
                current = self._live.get(live.session_id)
                if current is not None and (current is not live or not self._unused(live)):
                    return  # used, or opened again, meanwhile
                calls = self.store.run_calls()
                with contextlib.suppress(StorageUnavailable):  # kept: the TTL may take it
                    if await calls.owner(live.session_id) not in (None, self.leases.owner):
                        return  # another worker opened it
                    await calls.delete(live.session_id)
                    if current is not None:
                        self._drop(live)
        finally:
            if self._unused_timers.get(live.session_id) is asyncio.current_task():
                del self._unused_timers[live.session_id]

    def attach(self, live: LiveSession, outbox: Outbox) -> None:
        """Send the session's events to a client from now on."""
        live.outboxes.add(outbox)

    def detach(self, live: LiveSession, outbox: Outbox) -> None:
        """Stop sending to a client that left."""
        live.outboxes.discard(outbox)
        self.release(live)

    def release(self, live: LiveSession) -> None:
        """Note that ``live`` may have become idle (no run, no client).

        Idle sessions beyond ``max_idle_sessions`` are dropped from memory, the least recently
        used first; they stay on disk and are loaded again when used.
        """
        if not self._idle_now(live):
            return
        if self.store.remote and self._in_loop():
            # the store call waits in a task of its own, under the session's guard
            task = asyncio.create_task(self._release_off_loop(live), name="neta-release")
            self._releasing[live.session_id] = task
            task.add_done_callback(lambda _: self._forget_release(live.session_id, task))
            return
        self.leases.release(live.session_id)  # another process may take it over now
        self._rest(live)

    async def _release_off_loop(self, live: LiveSession) -> None:
        """``release``, its store call awaited (under the session's guard)."""
        async with self.guards.hold(live.session_id):
            if not self._idle_now(live):
                return  # opened again meanwhile
            await self.leases.release_async(live.session_id)
            if self._idle_now(live):
                self._rest(live)

    async def released(self, live: LiveSession) -> None:
        """Wait until a release of ``live`` started in the background (if any) is done."""
        task = self._releasing.get(live.session_id)
        if task is not None:
            await asyncio.wait({task})

    def _forget_release(self, session_id: str, task: asyncio.Task[None]) -> None:
        if self._releasing.get(session_id) is task:
            del self._releasing[session_id]

    @staticmethod
    def _in_loop() -> bool:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True

    def _idle_now(self, live: LiveSession) -> bool:
        """Whether ``live`` is in memory here with no run and no client."""
        return not live.closed and not live.busy and self._live.get(live.session_id) is live

    def _rest(self, live: LiveSession) -> None:
        """Keep ``live`` among the idle sessions, dropping the oldest beyond the limit."""
        self._idle[live.session_id] = None
        self._idle.move_to_end(live.session_id)
        while len(self._idle) > self.config.max_idle_sessions:
            session_id, _ = self._idle.popitem(last=False)
            self._drop(self._live[session_id])

    def _drop(self, live: LiveSession) -> None:
        """Forget an idle session in memory (it stays on disk)."""
        self._live.pop(live.session_id, None)
        self._idle.pop(live.session_id, None)
        live.closed = True
        self.agent.end_session(live.session)

    async def delete_idle_sessions(self) -> list[str]:
        """Delete the sessions nobody used for ``session_ttl`` seconds; their ids.

        A session with a run or a client holds a lease and stays. Nothing is deleted without
        a ``session_ttl``.
        """
        ttl = self.config.session_ttl
        if ttl is None:
            return []
        deleted = await self.store.run_calls().delete_idle(ttl)
        for session_id in deleted:
            live = self._live.get(session_id)
            if live is not None and not live.busy:
                self._drop(live)
        if deleted:
            _log.info("deleted %d sessions idle for over %g s", len(deleted), ttl)
        return deleted

    async def _delete_idle_sessions_periodically(self, ttl: float) -> None:
        while True:
            await asyncio.sleep(min(max(ttl / 4, 1.0), 3600.0))
            try:
                await self.delete_idle_sessions()
            except StorageUnavailable as exc:  # tried again next time
                _log.warning("could not delete idle sessions: %s", exc)

    async def delete(self, session_id: str) -> None:
        """End a session: forget it on disk, cancel its run and questions, close its clients.

        Raises:
            UnknownSession: no such session exists.
            SessionOwned: another server process runs the session now.
        """
        async with self.guards.hold(session_id):  # nobody opens it meanwhile
            await self.leases.claim_async(session_id)
            # Gone from disk first, so that nobody can load it again while its run stops.
            await self.store.run_calls().delete(session_id)
            self.leases.forget(session_id)
            live = self._live.pop(session_id, None)
            self._idle.pop(session_id, None)
        if live is None:
            return
        live.closed = True
        await self._stop_run(live)
        self.clarify.forget(live)
        deleted = SessionDeleted(session_id)
        live.publish(error_frame(session_id, deleted))
        for outbox in list(live.outboxes):
            outbox.close(1000, str(deleted))
        live.outboxes.clear()
        self.agent.end_session(live.session)

    async def shutdown(self) -> None:
        """Drain (``Drain``: runs finish, or are cut, saved and told), then let go of everything.

        A question still waiting when its run is cut is lost to the restart: its clients are
        told (``server_restarted``, again when they reconnect) and its history gets a note.
        """
        await self.drain.finish()
        if self._cleaner is not None:
            self._cleaner.cancel()
            await asyncio.wait({self._cleaner})
        for timer in list(self._unused_timers.values()):  # those sessions go now
            timer.cancel()
        for live in [live for live in self._live.values() if self._unused(live)]:
            await self._forget_unused(live, now=True)
        if self._releasing:
            await asyncio.wait(set(self._releasing.values()))
        lives = list(self._live.values())
        for live in lives:
            live.closed = True
            self.agent.end_session(live.session)
        self._live.clear()
        self._idle.clear()
        await self.clients.aclose()
        with contextlib.suppress(StorageUnavailable):
            await self.leases.stop()
        if self.cluster is not None:
            await self.cluster.close()
        await self.store.run_calls().close()
        self.store.close()

    # -- commands -----------------------------------------------------------------------------

    @overload
    async def act(
        self,
        session_id: str,
        command: SendAndWait,
        *,
        via: Connection | None = None,
        forwarded: bool = False,
    ) -> MessageOut: ...

    @overload
    async def act(
        self,
        session_id: str,
        command: Command,
        *,
        via: Connection | None = None,
        forwarded: bool = False,
    ) -> None: ...

    async def act(
        self,
        session_id: str,
        command: Command | SendAndWait,
        *,
        via: Connection | None = None,
        forwarded: bool = False,
    ) -> MessageOut | None:
        """Carry out a client's command on the session, here or on the worker running it.

        ``SendAndWait`` answers with the run's outcome once it ends; every other command
        with nothing once it is carried out (``SendMessage`` once its run started). ``via``
        is the connection the command came on (``connect``); ``forwarded`` says another
        worker sent the command here, finding that this one owns the session.

        Raises:
            HostError: the command was refused (here or by the worker running the session):
                ``busy``, ``unknown_session``, ``session_owned``, ``unknown_request``,
                ``not_running``, ``owner_unreachable``...
        """
        if isinstance(command, SendAndWait):
            return await send_and_wait(self, session_id, command)
        await carry_out(self, session_id, command, via=via, forwarded=forwarded)
        return None

    # -- runs -------------------------------------------------------------------------------

    def start_run(
        self,
        live: LiveSession,
        text: str,
        *,
        claimed: bool = False,
        approvals: ApprovalAnswers | None = None,
    ) -> asyncio.Task[RunResult]:
        """Start a run of ``text`` in the background; its events go to the session's clients.

        ``claimed`` says the caller just claimed the session's lease (``get``,
        ``Leases.claim_async``) without an await since: it is not claimed again here.
        ``approvals`` answer the calls the session's last run left waiting for approval (by
        request id: the call's id); they run (or are denied) first, then ``text``, which may
        then be empty.

        The task never fails: a cancelled run ends with outcome ``cancelled``, one that
        raised with outcome ``error``. A run whose session cannot be saved stops with outcome
        ``error``; ``live.failure`` then holds the ``StorageUnavailable`` its clients were sent.

        Raises:
            Busy: the session already has a run in progress.
            UnknownSession: the session was deleted.
            SessionOwned: another server process runs the session now.
            AnswerRefused: ``approvals`` names a call that does not wait for approval.
            HostError: the server is stopping (``server_stopping``).
        """
        if live.closed:
            raise UnknownSession(live.session_id)
        if live.running:
            raise Busy(live.session_id)
        if self.drain.begun:
            raise stopping_error()
        if approvals:
            check_waiting(live.session.history, approvals, with_text=bool(text))
        if not claimed:
            self.leases.claim(live.session_id)
        self._idle.pop(live.session_id, None)
        live.failure = None
        live.ended = False
        observe = self.metrics.watch_run()
        live.run = asyncio.create_task(
            run_live(self.agent, self.clients, self.saver, live, text, approvals, observe)
        )
        live.run.add_done_callback(lambda _: self.release(live))
        return live.run

    async def cancel_run(self, live: LiveSession) -> bool:
        """Cancel the session's run, if any; whether there was one.

        A run whose turn is over and which only saves its end has nothing left to cancel.
        """
        if not live.running or live.ended:
            return False
        await self._stop_run(live)
        return True

    async def _stop_run(self, live: LiveSession) -> None:
        """Stop the session's run; one whose turn is over is left to finish its last save."""
        run = live.run
        if run is None or run.done():
            return
        if not live.ended:
            run.cancel()
            # Settle its questions now, in the same step: an answer arriving while the run
            # unwinds is then refused as expired rather than accepted and thrown away.
            self.clarify.cancel_pending(live)
        await asyncio.wait({run})

    # -- questions --------------------------------------------------------------------------

    def answer(self, live: LiveSession, request_id: str, answer: Answer) -> None:
        """Deliver a client's answer to a question or approval of ``live``'s session.

        Raises:
            AnswerRefused: see ``QuestionRegistry.answer``.
        """
        self.clarify.answer(live, request_id, answer)

    async def approve(self, live: LiveSession, request_id: str, answer: Answer) -> None:
        """Deliver a client's answer to an approval of ``live``'s session.

        An approval a run waits on takes it; a call the session's last run left waiting (a
        REST session's, under its deferred id) is run with it, or denied, by a new run.

        Raises:
            AnswerRefused: see ``QuestionRegistry.answer``.
            SessionOwned: another server process runs the session now.
        """
        deferred = not live.running and not self.questions.knows(request_id)
        if not deferred or request_id not in waiting_approvals(live.session.history):
            self.clarify.answer(live, request_id, answer)
            return
        if not live.closed:
            await self.leases.claim_async(live.session_id)
        self.start_run(live, "", claimed=True, approvals={request_id: answer})
        choice = answer.choice if isinstance(answer, ApprovalAnswer) else None
        self.clarify.announce_approval(live, request_id, "answered", choice)

    def pending_questions(self, session_id: str) -> list[PendingQuestion]:
        """The session's unanswered clarify questions, as sent in ``session_ready``."""
        return self.clarify.pending(session_id)

    async def session_ready(self, session_id: str, *, here: bool) -> SessionReady:
        """What a client connecting to the session is told first: what the session waits on.

        ``here`` says whether the session is in memory here; otherwise another worker runs
        it, and its questions and approvals are read as saved.
        """
        if here:
            return SessionReady(
                session_id=session_id,
                pending_clarify=self.clarify.pending(session_id),
                pending_approvals=self.clarify.pending_approvals(session_id),
            )
        saved = await self.store.run_calls().pending_questions(session_id)
        return SessionReady(
            session_id=session_id,
            pending_clarify=[
                PendingQuestion(request_id=q.request_id, question=q.question, choices=q.choices)
                for q in saved
                if q.approval is None
            ],
            pending_approvals=[q.approval for q in saved if q.approval is not None],
        )

    async def tell_lost(self, connection: Connection) -> None:
        """Tell the session's clients what a restart ended, once: its questions, its run."""
        live = connection.live
        if live is None or connection.new:  # a session just started lost nothing
            return
        await self.clarify.tell_lost(live)
        with contextlib.suppress(StorageUnavailable):  # the history's note says it anyway
            if await self.store.run_calls().take_interrupted(live.session_id):
                live.publish(interrupted_frame(live.session_id, INTERRUPTED_REASON))


__all__ = ["Connection", "HostConfig", "LiveSession", "SessionHub", "SessionView", "check_config"]
