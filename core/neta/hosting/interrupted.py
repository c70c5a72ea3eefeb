"""Runs that did not end by themselves: their notes in the history, and what clients are told.

A run ends ``interrupted`` in two ways. The server stopping (SIGTERM) cuts the runs its drain
did not see finish (``STOPPED_REASON``, ``note_stopped``); its clients are told at once. A
server process that died (``kill -9``, a crash) leaves its run marked going in the store, and
the next process to find it, at its start, at a heartbeat, or when it opens the session, ends
it (``end_interrupted``: ``INTERRUPTED_REASON``). Either way the history gets an assistant note
after the last save, so the model, and whoever reads the conversation, knows the request may be
only partly done.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from neta.events import RunFinished
from neta.hosting.clarify_bridge import note_lost_questions
from neta.hosting.protocol import event_frame
from neta.hosting.store import RunCalls, StoredQuestion, StoredSession
from neta.messages import Message, close_interrupted_calls

INTERRUPTED_REASON = "the server process running this session stopped; what was saved is kept"
"""The reason of the ``run_finished {outcome: "interrupted"}`` of a run whose process died."""

STOPPED_REASON = (
    "the server stopped (restarted or shut down) before this run finished; what was saved is kept"
)
"""The reason of the ``run_finished {outcome: "interrupted"}`` of a run the server's drain cut."""

INTERRUPTED_NOTE = (
    "[interrupted] The server running this conversation stopped before this run finished. "
    "What was done until then is kept above; the request may be only partly done."
)
"""The assistant message that ends the history of an interrupted run."""


class Teller(Protocol):
    """Where a session's frames go to every client of it (a ``Cluster``: on every worker)."""

    def publish(self, session_id: str, item: dict[str, Any]) -> None:
        """Send ``item`` to every client of the session."""


def note_interrupted(history: list[Message]) -> None:
    """End ``history`` as a run that was cut short: its open calls closed, then the note."""
    close_interrupted_calls(history)
    history.append(Message(role="assistant", content=INTERRUPTED_NOTE))


def note_stopped(history: list[Message], lost: Sequence[StoredQuestion]) -> None:
    """End the history of a run the server's stop cut (in place).

    A run that waited on questions is explained by their notes (the restart rule); any other
    gets ``INTERRUPTED_NOTE``.
    """
    if not lost or not note_lost_questions(history, lost):
        note_interrupted(history)


def interrupted_frame(session_id: str, reason: str) -> dict[str, Any]:
    """The ``run_finished {outcome: "interrupted"}`` frame of the session's run."""
    finished = RunFinished(session_id=session_id, outcome="interrupted", reason=reason)
    return event_frame(session_id, finished)


async def end_interrupted(
    calls: RunCalls, owner: str, saved: StoredSession, teller: Teller | None
) -> StoredSession:
    """End the run a dead process left marked in ``saved``; the session as saved then.

    The caller holds the session's lease (``owner``) and guard. The note and the end are one
    save; the clients are told through ``teller`` (every worker's), or, with none, the next
    client to connect is (``Store.take_interrupted``).
    """
    history = list(saved.history)
    note_interrupted(history)
    version = await calls.save(
        saved.session_id,
        history,
        owner=owner,
        run="ended" if teller is not None else "interrupted",
    )
    if teller is not None:
        teller.publish(saved.session_id, interrupted_frame(saved.session_id, INTERRUPTED_REASON))
    return StoredSession(saved.session_id, saved.entry, history, saved.todos, version=version)
