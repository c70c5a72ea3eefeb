"""Saving a hosted session before it acts, and stopping it when that cannot be done.

The hub makes ``SessionSaver.save_async`` each hosted session's checkpoint
(``AgentSession.checkpoint``): the runtime awaits it before each model call and before a
turn's tool calls run. A save that fails raises there, so the model is not asked and no tool
runs: nothing happens in the user's workspace that the saved conversation does not show.

Saves to a remote store are made without holding up the event loop, one after another per
session (``SessionSaver._save_soon`` chains them, so a save cut short by a cancelled run still
lands before the next one).

A run's first save marks it going in the store and its last one marks it ended (``run``): a
save that says so is written even when nothing else changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from neta.errors import HostError, SessionOwned, StorageUnavailable
from neta.hosting.live import LiveSession
from neta.hosting.protocol import error_frame
from neta.hosting.store import RunMark, Store
from neta.messages import Message

_log = logging.getLogger("neta.hosting")


_Changes = tuple[int, list[Message], str | None, int | None, list[Message]]
"""What a save writes: from which position, those messages, the todo list (or ``None``), the
todo revision, and the whole history as saved."""


class SessionSaver:
    """Saves what changed in a live session, and stops the session when that fails.

    Args:
        store: where sessions are saved.
        owner: this process's lease owner name (a save needs the session's lease).
    """

    def __init__(self, store: Store, owner: str) -> None:
        self.store = store
        self.owner = owner

    def save(self, live: LiveSession, *, stop: bool = True, run: RunMark | None = None) -> None:
        """Write what changed in the session's history and todo list since the last save.

        Made in the calling thread: for a session no run uses (a run saves with
        ``save_async``). ``run`` marks the session's run (``Store.save``).

        Raises:
            StorageUnavailable: the store could not write; the session's clients were told,
                and its run is stopped (unless ``stop`` is false: the run is ending anyway).
            SessionOwned: this process no longer holds the session's lease (likewise).
        """
        changes = self._changes(live, run)
        if changes is None:
            return
        try:
            version = self._write(live.session_id, changes, run)
        except (StorageUnavailable, SessionOwned) as exc:
            self.fail(live, exc, stop=stop)
            raise
        self._written(live, changes, version)

    def _save_soon(
        self, live: LiveSession, *, stop: bool = True, run: RunMark | None = None
    ) -> asyncio.Task[None]:
        """Start saving the session, after the saves started before (in the running loop).

        The task fails as ``save`` does; a caller cancelled meanwhile need not await it.
        """
        previous = live.saving
        task = asyncio.get_running_loop().create_task(self._save_after(live, previous, stop, run))
        task.add_done_callback(_seen)
        live.saving = task
        return task

    async def save_async(
        self, live: LiveSession, *, stop: bool = True, run: RunMark | None = None
    ) -> None:
        """``save`` without holding up the event loop, after the saves started before."""
        if not self.store.remote and (live.saving is None or live.saving.done()):
            self.save(live, stop=stop, run=run)  # a local write: no thread, no task
            return
        # shielded: a save cancelled halfway could commit after a newer one
        await asyncio.shield(self._save_soon(live, stop=stop, run=run))

    async def _save_after(
        self,
        live: LiveSession,
        previous: asyncio.Task[None] | None,
        stop: bool,
        run: RunMark | None,
    ) -> None:
        if previous is not None and not previous.done():
            await asyncio.wait({previous})
        changes = self._changes(live, run)
        if changes is None:
            return
        try:
            version = await self._write_async(live.session_id, changes, run)
        except (StorageUnavailable, SessionOwned) as exc:
            self.fail(live, exc, stop=stop)
            raise
        self._written(live, changes, version)

    def _changes(self, live: LiveSession, run: RunMark | None = None) -> _Changes | None:
        """What changed since the last save, or ``None`` if nothing did (and ``run`` is none).

        Raises:
            HostError: the session's run already failed to save (``live.failure``).
        """
        if live.failure is not None:
            raise live.failure
        if live.closed:
            return None
        history = live.session.history
        start = 0
        for saved, current in zip(live.saved, history, strict=False):
            if saved is not current:
                break
            start += 1
        todo_store = live.session.context.todo_store
        revision = todo_store.snapshot().revision if todo_store is not None else None
        todos_changed = revision != live.saved_todos
        if start == len(history) == len(live.saved) and not todos_changed and run is None:
            return None
        todos = todo_store.snapshot().to_json() if todos_changed and todo_store else None
        snapshot = list(history)
        return start, snapshot[start:], todos, revision, snapshot

    def _write(self, session_id: str, changes: _Changes, run: RunMark | None) -> int:
        start, messages, todos, _, _ = changes
        try:
            return self.store.save(
                session_id, messages, owner=self.owner, start=start, todos=todos, run=run
            )
        except ValueError as exc:  # text that is not valid Unicode cannot be stored either
            raise StorageUnavailable(f"the session cannot be saved: {exc}") from exc

    async def _write_async(self, session_id: str, changes: _Changes, run: RunMark | None) -> int:
        start, messages, todos, _, _ = changes
        try:
            return await self.store.run_calls().save(
                session_id, messages, owner=self.owner, start=start, todos=todos, run=run
            )
        except ValueError as exc:  # text that is not valid Unicode cannot be stored either
            raise StorageUnavailable(f"the session cannot be saved: {exc}") from exc

    @staticmethod
    def _written(live: LiveSession, changes: _Changes, version: int) -> None:
        live.version = version
        live.saved = changes[4]
        live.saved_todos = changes[3]

    async def end_unsaved_run(self, live: LiveSession) -> None:
        """Mark the session's run ended though its state could not be saved (if the store can).

        What was saved stays as it was; without this the run would be taken, later, for one
        its server's death cut short.
        """
        with contextlib.suppress(HostError):
            live.version = await self.store.run_calls().save(
                live.session_id, [], owner=self.owner, start=len(live.saved), run="ended"
            )

    def fail(self, live: LiveSession, failure: HostError, *, stop: bool = True) -> None:
        """Tell the session's clients that it cannot be saved, and stop its run.

        ``failure`` is ``StorageUnavailable``, or ``SessionOwned`` when this process lost the
        session's lease (another took the session over): either way nothing more is written.
        """
        if live.failure is not None:
            return
        _log.error("could not save session %s: %s", live.session_id, failure)
        live.failure = failure
        live.publish(error_frame(live.session_id, failure))
        if stop and live.running and live.run is not None:
            # soon, not now: a task cancelled by itself and then returning would end cancelled
            # rather than with its result (the tools and the provider refuse meanwhile)
            asyncio.get_running_loop().call_soon(live.run.cancel)


def _seen(task: asyncio.Task[None]) -> None:
    """Mark a save's failure as seen (``fail`` told the clients; the tools refuse)."""
    if not task.cancelled():
        task.exception()
