"""Where a hosted session is saved before it acts, and what stops it when it cannot be.

A hosted session's history is saved before each model call (``SavingProvider``) and before a
turn's tool calls run (the hub saves on ``tool_call_start``). When such a save fails the run
is stopped; ``guard_tools`` makes sure that no tool call starts meanwhile, so nothing happens
in the user's workspace that the saved conversation does not show.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from neta.errors import HostError, ToolError
from neta.providers.base import ModelRequest, ModelResponse, Provider, TextSink
from neta.session_tools import BoundTool
from neta.tools import Tool


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
