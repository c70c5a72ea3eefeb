"""Carrying out a host app's commands (``SessionHub.act``): here, or on the session's owner.

A command acts on the session in memory here when a client connection of this process holds
it; otherwise, on a host of several workers, it goes to the worker holding the session's lease
(the cluster asks that worker and raises its refusal here), and a session nobody else owns is
opened here. A command another worker sent (``forwarded``) is always carried out here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Protocol

from neta.errors import AnswerRefused, HostError, SessionOwned, UnknownSession, quoted_id
from neta.hosting.cluster.cluster import Cluster
from neta.hosting.cluster.leases import Leases
from neta.hosting.drain import Drain, stopping_error
from neta.hosting.live import Connection, LiveSession
from neta.hosting.protocol import (
    AnswerQuestion,
    ApprovalAnswers,
    Approve,
    Cancel,
    Command,
    MessageOut,
    SendAndWait,
    SendMessage,
    command_json,
)
from neta.hosting.questions import Answer
from neta.hosting.replies import reply_of_frames, reply_of_run
from neta.hosting.store import Store
from neta.runtime.agent import RunResult


class _Viewed(Protocol):
    @property
    def todos(self) -> list[dict[str, object]]: ...


class CommandHub(Protocol):
    """What carrying out commands needs of a hub (a ``SessionHub``)."""

    @property
    def store(self) -> Store:
        """The sessions' store."""

    @property
    def leases(self) -> Leases:
        """This process's leases."""

    @property
    def cluster(self) -> Cluster | None:
        """The hub's part in a host of several workers, if it is one."""

    @property
    def drain(self) -> Drain:
        """The hub's stop (a request waiting on another worker's run is let go at its end)."""

    async def get(self, session_id: str) -> LiveSession:
        """The live session, loaded and claimed here."""

    def view(self, session_id: str) -> Awaitable[_Viewed]:
        """The session's history and todo items."""

    def release(self, live: LiveSession) -> None:
        """Note that ``live`` may have become idle."""

    async def released(self, live: LiveSession) -> None:
        """Wait until a release of ``live`` started in the background is done."""

    def start_run(
        self,
        live: LiveSession,
        text: str,
        *,
        claimed: bool = False,
        approvals: ApprovalAnswers | None = None,
    ) -> asyncio.Task[RunResult]:
        """Start a run of ``text`` in the session."""

    def answer(self, live: LiveSession, request_id: str, answer: Answer) -> None:
        """Deliver an answer to a question of the session."""

    async def approve(self, live: LiveSession, request_id: str, answer: Answer) -> None:
        """Deliver an answer to an approval of the session."""

    async def cancel_run(self, live: LiveSession) -> bool:
        """Cancel the session's run, if any; whether there was one."""


async def carry_out(
    hub: CommandHub,
    session_id: str,
    command: Command,
    *,
    via: Connection | None,
    forwarded: bool,
) -> None:
    """Carry out ``command`` on the session, here or on the worker running it.

    Raises:
        HostError: the command was refused, here or by the worker running the session.
    """
    live = via.live if via is not None else None
    if hub.cluster is not None and (live is None or not live.busy or live.closed):
        if forwarded or not await hub.cluster.route(session_id, command_json(command)):
            await _carry_out_here(hub, session_id, command)
    elif live is not None:
        await _act_on(hub, live, command)
    else:
        await _carry_out_here(hub, session_id, command)


async def _act_on(hub: CommandHub, live: LiveSession, command: Command) -> None:
    """Carry out ``command`` on ``live``, in memory here."""
    if isinstance(command, SendMessage):
        if not live.closed and not live.running:  # else ``start_run`` refuses it
            await hub.leases.claim_async(live.session_id)
        hub.start_run(live, command.text, claimed=True, approvals=command.approvals)
    elif isinstance(command, AnswerQuestion):
        hub.answer(live, command.request_id, command.answer)
    elif isinstance(command, Approve):
        await hub.approve(live, command.request_id, command.answer())
    elif isinstance(command, Cancel) and not await hub.cancel_run(live):
        raise HostError("no run to cancel", code="not_running")


async def _carry_out_here(hub: CommandHub, session_id: str, command: Command) -> None:
    """Carry out ``command`` here, opening the session here (no other worker owns it)."""
    if isinstance(command, SendMessage):
        running = await hub.get(session_id)
        try:
            hub.start_run(running, command.text, claimed=True, approvals=command.approvals)
        except BaseException:
            hub.release(running)
            raise
        return
    live = await _here(hub, session_id)
    if isinstance(command, AnswerQuestion | Approve) and live is None:
        raise AnswerRefused(f"no question {quoted_id(command.request_id)} waits")
    if live is not None:
        await _act_on(hub, live, command)
    elif isinstance(command, Cancel):
        raise HostError("no run to cancel", code="not_running")


async def _here(hub: CommandHub, session_id: str) -> LiveSession | None:
    """The session, if it can be opened here (else ``None``), released when idle."""
    try:
        live = await hub.get(session_id)
    except (SessionOwned, UnknownSession):
        return None
    if not live.busy:
        hub.release(live)
    return live


async def send_and_wait(hub: CommandHub, session_id: str, command: SendAndWait) -> MessageOut:
    """Run a message to its end, here or on the worker running the session; its outcome.

    Raises:
        HostError: the message was refused, the session was deleted before the run ended
            (``unknown_session``), it could not be saved (``storage_unavailable``), or this
            server stopped before the run ended (``server_stopping``).
    """
    try:
        live = await hub.get(session_id)
    except SessionOwned:
        if hub.cluster is None:
            raise
        message = SendMessage(command.text, command.approvals)
        frames = await hub.drain.unless_stopped(
            hub.cluster.run_on_owner(
                session_id,
                lambda: carry_out(hub, session_id, message, via=None, forwarded=False),
            )
        )
        return reply_of_frames(session_id, frames, (await hub.view(session_id)).todos)
    try:
        run = hub.start_run(live, command.text, claimed=True, approvals=command.approvals)
    except BaseException:
        hub.release(live)
        raise
    # The run belongs to the hub: should the caller be cancelled, the run goes on.
    await asyncio.wait({run})
    await hub.released(live)  # the session's lease is free for another worker's request
    if not await hub.store.run_calls().exists(session_id):
        raise UnknownSession(session_id)
    if live.failure is not None:  # the run stopped: the session could not be saved
        raise live.failure
    reply = reply_of_run(run, live.todo_items())
    if reply.outcome == "interrupted":  # this server stops: the caller may send it elsewhere
        raise stopping_error()
    return reply
