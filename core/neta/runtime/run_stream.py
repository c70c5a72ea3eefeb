"""``RunStream``: a run whose events a host reads as they come (``Agent.stream``).

The run's events go into a bounded buffer the reader takes them from. The runtime emits events
synchronously, so the run cannot stop at every one; it waits instead at its checkpoints (before
each model call and before a turn's tool calls run) until the reader has made room. Between two
checkpoints, while the buffer is full, a text piece (``text_delta``) or a piece of a tool's
output (``tool_output``) that continues the last event waiting is joined to it; any other event
still goes in, so what waits is the buffer's size plus at most what one reply's tool calls
emit, for the run and each sub-agent running at the time (they wait for the same reader at
their own checkpoints). A slow reader therefore slows the run down; it never makes the buffer
grow with the run.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Generic, Self

from neta.errors import ConfigError
from neta.events import Event, TextDelta, ToolOutput
from neta.runtime.run_result import OutputT, RunResult
from neta.runtime.run_scope import RunScope, entered

DEFAULT_STREAM_BUFFER = 64
"""How many events a stream holds for its reader before the run waits."""

Start = Callable[[Callable[[Event], None]], Awaitable[RunResult[OutputT]]]
"""Starts the run with an ``on_event`` that hands each event to the stream."""


class RunStream(Generic[OutputT]):
    """A run in progress whose events are read as they come: ``async with agent.stream(...)``.

    Entering the block starts the run; ``async for event in run`` yields its events (the
    typed models of ``neta.events``) in order, ending after ``run_finished``. Then ``result``
    holds the ``RunResult``. An exception of the run (``OutputValidationError``) is raised by
    the iteration once the events before it were read. Leaving the block before the run
    ended, by ``break``, an exception or the reading task's cancellation, cancels the run (its
    tools too) and waits for it to stop.

    A reader slower than the run makes the run wait (see the module's docstring): the stream
    holds ``buffer`` events, and the run goes on past a checkpoint only when fewer wait.
    """

    def __init__(self, start: Start[OutputT], buffer: int) -> None:
        self._start = start
        self._size = buffer
        # each event waiting, with the pieces of text joined to it while the buffer was full
        self._events: collections.deque[tuple[Event, list[str]]] = collections.deque()
        self._arrived = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self._task: asyncio.Task[RunResult[OutputT]] | None = None

    @property
    def buffered(self) -> int:
        """How many events wait to be read."""
        return len(self._events)

    @property
    def result(self) -> RunResult[OutputT]:
        """The run's result, once its events were read to the end.

        Raises:
            ConfigError: the run has not finished, or was cancelled before it did.
            Exception: what the run raised, if it raised.
        """
        task = self._task
        if task is None or not task.done():
            raise ConfigError("the run has not finished: read its events to the end first")
        if task.cancelled():
            raise ConfigError("the run was cancelled before it finished: it has no result")
        return task.result()

    async def __aenter__(self) -> Self:
        self._task = asyncio.ensure_future(self._run())
        self._task.add_done_callback(lambda _: self._arrived.set())
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        task = self._task
        if task is None:
            return
        if not task.done():
            task.cancel()
            await asyncio.wait([task])  # its tools stopped, its last events emitted
        if not task.cancelled():
            task.exception()  # what it raised is the iteration's to raise, not the loop's to log

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Event:
        task = self._task
        if task is None:
            raise ConfigError("read a stream inside its block: async with agent.stream(...)")
        while not self._events:
            if task.done():
                if not task.cancelled() and task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
                raise StopAsyncIteration
            self._arrived.clear()
            await self._arrived.wait()
        event, pieces = self._events.popleft()
        if len(self._events) < self._size:
            self._room.set()
        if pieces and isinstance(event, TextDelta | ToolOutput):
            event = event.model_copy(update={"text": event.text + "".join(pieces)})
        return event

    async def _run(self) -> RunResult[OutputT]:
        with entered(RunScope(None, pace=self._wait_for_room)):
            return await self._start(self._put)

    def _put(self, event: Event) -> None:
        if len(self._events) >= self._size:
            self._room.clear()
            last, pieces = self._events[-1]
            if _continues(last, event):
                assert isinstance(event, TextDelta | ToolOutput)
                pieces.append(event.text)
                return
        self._events.append((event, []))
        self._arrived.set()

    async def _wait_for_room(self) -> None:
        while len(self._events) >= self._size:
            self._room.clear()
            await self._room.wait()


def _continues(last: Event, event: Event) -> bool:
    """Whether ``event`` continues ``last``: more of the same text, or of a tool's output."""
    if last.agent_id != event.agent_id or last.session_id != event.session_id:
        return False
    if isinstance(last, TextDelta):
        return isinstance(event, TextDelta)
    return (
        isinstance(last, ToolOutput) and isinstance(event, ToolOutput) and last.name == event.name
    )
