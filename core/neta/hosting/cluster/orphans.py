"""What a server process that is gone left behind: its leases, questions and runs.

A hub looks when it starts and at each heartbeat (a worker may have died meanwhile):

1. the leases of a process on this machine that provably runs no more are freed at once
   (``owner_is_gone``), not waited out;
2. the questions left waiting in sessions no live lease covers are noted in their history
   (they can no longer be answered live; the next message is the answer) and their clients are
   told ``clarify_resolved {server_restarted}`` (over the bus, or when they reconnect);
3. then the runs those sessions still have marked going end: the history gets
   ``INTERRUPTED_NOTE`` and the clients ``run_finished {outcome: "interrupted"}``.
"""

from __future__ import annotations

import logging
from typing import Protocol

from neta.errors import HostError
from neta.hosting.clarify_bridge import note_lost_questions
from neta.hosting.cluster.cluster import Cluster
from neta.hosting.cluster.leases import Leases
from neta.hosting.interrupted import end_interrupted
from neta.hosting.session_guards import SessionGuards
from neta.hosting.store import Store, StoredQuestion

_log = logging.getLogger("neta.hosting")


class OrphanHub(Protocol):
    """What adopting orphans needs of a hub (a ``SessionHub``)."""

    @property
    def store(self) -> Store:
        """The sessions' store, shared by every worker."""

    @property
    def leases(self) -> Leases:
        """This worker's leases."""

    @property
    def guards(self) -> SessionGuards:
        """The guards a session is opened under."""

    @property
    def cluster(self) -> Cluster | None:
        """The hub's part in a host of several workers, if it is one."""

    def in_use(self, session_id: str) -> bool:
        """Whether the session runs or has a client here."""


def _by_session(lost: list[StoredQuestion]) -> dict[str, list[StoredQuestion]]:
    by_session: dict[str, list[StoredQuestion]] = {}
    for question in lost:
        by_session.setdefault(question.session_id, []).append(question)
    return by_session


async def adopt_orphans(hub: OrphanHub) -> list[StoredQuestion]:
    """Free a dead process's leases, note its questions, end its runs; return the questions.

    Each session is handled under its guard, holding its lease, so no connection opens it
    meanwhile.
    """
    await hub.leases.free_gone_owners()
    calls = hub.store.run_calls()
    lost = await calls.lose_questions()
    for session_id, questions in _by_session(lost).items():
        async with hub.guards.hold(session_id):
            try:
                await hub.leases.claim_async(session_id)
            except HostError:  # taken over meanwhile, or deleted: its new owner decides
                continue
            try:
                saved = await calls.load(session_id)
                if saved is not None and note_lost_questions(saved.history, questions):
                    await calls.save(session_id, saved.history, owner=hub.leases.owner)
                if hub.cluster is not None:
                    hub.cluster.tell_lost(session_id, questions)
            except HostError as exc:
                _log.warning("could not note lost questions of %s: %s", session_id, exc)
            finally:
                if not hub.in_use(session_id):
                    await hub.leases.release_async(session_id)
    for session_id in await calls.interrupted_runs():
        await _end_run(hub, session_id)
    return lost


async def _end_run(hub: OrphanHub, session_id: str) -> None:
    """End the run a dead process left going in the session, once, for every client."""
    calls = hub.store.run_calls()
    async with hub.guards.hold(session_id):
        if await calls.pending_questions(session_id):
            return  # its questions are noted first (the next look)
        try:
            await hub.leases.claim_async(session_id)
        except HostError:  # taken over meanwhile, or deleted: its new owner decides
            return
        try:
            saved = await calls.load(session_id)
            if saved is not None and saved.run_owner is not None and not hub.in_use(session_id):
                await end_interrupted(calls, hub.leases.owner, saved, hub.cluster)
        except HostError as exc:
            _log.warning("could not end the interrupted run of %s: %s", session_id, exc)
        finally:
            if not hub.in_use(session_id):
                await hub.leases.release_async(session_id)
