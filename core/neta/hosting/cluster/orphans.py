"""Questions a server process that is gone left waiting: noted in their sessions' history.

They can no longer be answered live; their sessions continue REST-style (the next message is
the answer). A hub looks for them when it starts, and, on a host of several workers, at each
heartbeat (a worker may have died meanwhile); the sessions' clients are then told
``clarify_resolved {server_restarted}`` over the bus.
"""

from __future__ import annotations

import logging
from typing import Protocol

from neta.errors import HostError
from neta.hosting.clarify_bridge import note_lost_questions
from neta.hosting.cluster.cluster import Cluster
from neta.hosting.cluster.leases import Leases
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
    """Note the questions a process that is gone left waiting; return them.

    A hub does this when it starts and, on a host of several workers, at each heartbeat. Each
    session is noted under its guard, so no connection opens it meanwhile.
    """
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
    if hub.cluster is not None:
        hub.cluster.sweep()  # after the questions' frames: then the runs' ends
    return lost
