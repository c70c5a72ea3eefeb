"""Saving a hosted session before it acts, and stopping it when that cannot be done.

A hosted session's history is saved before each model call (``SavingProvider``) and before a
turn's tool calls run (the hub saves on ``tool_call_start``). When such a save fails the run
is stopped; ``guard_tools`` makes sure that no tool call starts meanwhile, so nothing happens
in the user's workspace that the saved conversation does not show.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from neta.errors import HostError, SessionOwned, StorageUnavailable, ToolError
from neta.hosting.live import LiveSession
from neta.hosting.protocol import error_frame
from neta.hosting.store import Store
from neta.providers.base import ModelRequest, ModelResponse, Provider, TextSink
from neta.session_tools import BoundTool
from neta.tools import Tool

_log = logging.getLogger("neta.hosting")


class SavingProvider:
    """A session's provider that saves the session before each model call.

    By then the previous turn's tool results are in the history: the model may think for a
    long time, and a crash meanwhile should not lose what the tools did. A save that fails
    raises ``StorageUnavailable``: the model is not asked.
    """

    def __init__(self, inner: Provider, save: Callable[[], None]) -> None:
        self._inner = inner
        self._save = save

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """Save, then let the wrapped provider answer."""
        self._save()
        return await self._inner.complete(request, on_text)


class SessionSaver:
    """Saves what changed in a live session, and stops the session when that fails.

    Args:
        store: where sessions are saved.
        owner: this process's lease owner name (a save needs the session's lease).
    """

    def __init__(self, store: Store, owner: str) -> None:
        self.store = store
        self.owner = owner

    def save(self, live: LiveSession, *, stop: bool = True) -> None:
        """Write what changed in the session's history and todo list since the last save.

        Raises:
            StorageUnavailable: the store could not write; the session's clients were told,
                and its run is stopped (unless ``stop`` is false: the run is ending anyway).
            SessionOwned: this process no longer holds the session's lease (likewise).
        """
        if live.failure is not None:
            raise live.failure
        if live.closed:
            return
        history = live.session.history
        start = 0
        for saved, current in zip(live.saved, history, strict=False):
            if saved is not current:
                break
            start += 1
        todo_store = live.session.context.todo_store
        revision = todo_store.snapshot().revision if todo_store is not None else None
        todos_changed = revision != live.saved_todos
        if start == len(history) == len(live.saved) and not todos_changed:
            return
        try:
            live.version = self.store.save(
                live.session_id,
                history[start:],
                owner=self.owner,
                start=start,
                todos=todo_store.snapshot().to_json()
                if todos_changed and todo_store is not None
                else None,
            )
        except (StorageUnavailable, SessionOwned) as exc:
            self.fail(live, exc, stop=stop)
            raise
        except ValueError as exc:  # text that is not valid Unicode cannot be stored either
            failure = StorageUnavailable(f"the session cannot be saved: {exc}")
            self.fail(live, failure, stop=stop)
            raise failure from exc
        live.saved = list(history)
        live.saved_todos = revision

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


def guard_tools(
    tools: dict[str, BoundTool], failure: Callable[[], HostError | None]
) -> dict[str, BoundTool]:
    """The same tools, each refusing to start while ``failure()`` says a save failed."""
    return {
        name: BoundTool(bound.schema, _guarded(bound.tool, failure))
        for name, bound in tools.items()
    }


def _guarded(tool: Tool, failure: Callable[[], HostError | None]) -> Tool:
    execute = tool.execute

    def refuse_if_unsaved() -> None:
        if failure() is not None:
            raise ToolError("not run: the session could not be saved, so the run is stopping")

    if tool.runs_in_thread:

        def run(args: Any) -> Any:
            refuse_if_unsaved()
            return execute(args)

        return replace(tool, execute=run)

    async def run_async(args: Any) -> Any:
        refuse_if_unsaved()
        outcome = execute(args)
        return await outcome if inspect.isawaitable(outcome) else outcome

    return replace(tool, execute=run_async)
