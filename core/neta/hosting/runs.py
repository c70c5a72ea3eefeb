"""``run_live``: one run of a hosted session, saved as it goes, its end told after the last save.

Every event the run emits goes to the session's clients. The session is saved when the run
starts (marking it going, in the store), at the run's checkpoints (before each model call and
before a turn's tools run: ``AgentSession.checkpoint``, set by the hub) and when it ends (the
mark cleared in the same save). A run that did not save its state ends as an error, and memory
goes back to what is on disk. A run the stopping server cuts ends ``interrupted``, noted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Literal

from neta.errors import HostError
from neta.events import RunFinished
from neta.hosting.interrupted import STOPPED_REASON, note_stopped
from neta.hosting.live import LiveSession
from neta.hosting.protocol import ApprovalAnswers, event_frame
from neta.hosting.save_points import SessionSaver
from neta.messages import Usage
from neta.providers.client_pool import ClientPool
from neta.runtime.agent import Agent, RunResult

_log = logging.getLogger("neta.hosting")


def _as_saved(event: RunFinished, live: LiveSession) -> RunFinished:
    """``event`` as the session's saves allow: an error if the run's state could not be saved.

    A run cancelled because the server stops was interrupted.
    """
    if live.failure is None:
        if live.stopping is not None and event.outcome == "cancelled":
            return event.model_copy(update={"outcome": "interrupted", "reason": STOPPED_REASON})
        return event
    reason = f"stopped: {live.failure}"
    if (event.outcome, event.reason) == ("error", reason):
        return event
    return event.model_copy(update={"outcome": "error", "reason": reason})


async def run_live(
    agent: Agent,
    clients: ClientPool,
    saver: SessionSaver,
    live: LiveSession,
    text: str,
    approvals: ApprovalAnswers | None = None,
    observe: Callable[[Any], None] | None = None,
) -> RunResult:
    """Run ``text`` in ``live``'s session with ``agent``; its events go to the session's clients.

    ``observe`` sees each event as the clients get it (the host's metrics).

    A cancelled run ends with outcome ``cancelled`` (``interrupted`` when the server stopped
    it: ``live.stopping``), one that raised with outcome ``error``; a run whose session could not
    be saved ends with outcome ``error`` (``live.failure``).
    """
    events: list[Any] = []
    ending: list[RunFinished] = []  # told once the run's end is saved (see ``finally``)

    def forward(event: Any) -> None:
        if isinstance(event, RunFinished):
            event = _as_saved(event, live)
        events.append(event)
        if isinstance(event, RunFinished) and event.agent_id is None:
            live.ended = True  # only the last save is left: no cancel cuts it short
            ending.append(event)
        else:
            live.publish(event_frame(live.session_id, event))
            if observe is not None:
                observe(event)

    try:
        await saver.save_async(live, run="going")
        with clients.active():
            return await agent.run(
                text, session=live.session, on_event=forward, approvals=approvals
            )
    except (asyncio.CancelledError, HostError):
        # only the hub cancels runs, and it waits for them to end: no one else to tell
        if live.failure is not None:
            return _ended(live, events, forward, "error", f"stopped: {live.failure}")
        if live.stopping is not None:
            note_stopped(live.session.history, live.stopping)
            return _ended(live, events, forward, "interrupted", STOPPED_REASON)
        return _ended(live, events, forward, "cancelled", "the run was cancelled")
    except Exception as exc:  # a plugin or provider bug must not leave clients waiting
        _log.exception("run of session %s failed", live.session_id)
        reason = f"the run failed: {type(exc).__name__}: {exc}"
        return _ended(live, events, forward, "error", reason)
    finally:
        # The run's end reaches its clients after its last save, the moment the run stops
        # counting as running: a client acting on ``run_finished`` (reading the history,
        # cancelling, sending the next message) never meets the run still saving.
        try:
            if live.failure is None:
                with contextlib.suppress(HostError):
                    await saver.save_async(live, stop=False, run="ended")
            if live.failure is not None:
                # memory goes back to what is on disk: no client reads a turn that was lost
                live.session.history[:] = live.saved
                await saver.end_unsaved_run(live)
        finally:
            for event in ending:  # a last save that failed makes the run's end an error
                told = _as_saved(event, live)
                live.publish(event_frame(live.session_id, told))
                if observe is not None:
                    observe(told)


def _ended(
    live: LiveSession,
    events: list[Any],
    forward: Callable[[Any], None],
    outcome: Literal["cancelled", "error", "interrupted"],
    reason: str,
) -> RunResult:
    """The result of a run that did not return, announced if the runtime did not."""
    if not any(isinstance(e, RunFinished) and e.agent_id is None for e in events):
        forward(RunFinished(session_id=live.session_id, outcome=outcome, reason=reason))
    return RunResult(
        text="",
        outcome=outcome,
        reason=reason,
        messages=list(live.session.history),
        events=events,
        usage=Usage(),
        turns=0,
        session_id=live.session_id,
    )
