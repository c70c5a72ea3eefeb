"""Running one turn's tool calls: each to a result the model reads, never a crash of the run."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict, TypeVar

from neta.errors import ToolError
from neta.events import ToolCallStart, ToolResultEvent
from neta.images import fit_images
from neta.messages import Message
from neta.runtime.arguments import parse_arguments
from neta.runtime.gate import Gate
from neta.runtime.limits import RunLimits
from neta.session import EventSink
from neta.session_tools import BoundTool
from neta.suggest import did_you_mean
from neta.tools import ToolCall, ToolResult
from neta.truncation import truncate_middle

if TYPE_CHECKING:
    from neta.tracing.spans import Tracing

_T = TypeVar("_T")


class EventTag(TypedDict):
    """Who an event belongs to: the session, and the sub-agent when it is a crew child's."""

    session_id: str
    agent_id: str | None


@dataclass(frozen=True)
class Turn:
    """What running one turn's tool calls needs."""

    tools: Mapping[str, BoundTool]
    limits: RunLimits
    # One per run. Plain-function tools ran one at a time on the loop before they ran in
    # threads; they still run one at a time, so tools sharing session state need no locks.
    thread_gate: asyncio.Lock
    emit: EventSink
    tag: EventTag
    stop_note: str  # why the reply was cut, if it was: its last call's arguments may be too
    refused: Mapping[str, str]  # calls that must not run, by id: the error the model reads
    gate: Gate | None = None  # decides each call before it runs (None: every call runs)
    arguments: Mapping[str, dict[str, object]] = field(default_factory=dict)  # read, by call id
    tracing: Tracing | None = None  # each call a span (None: tracing is off)


async def run_calls(calls: Sequence[ToolCall], turn: Turn) -> list[ToolResult]:
    """Run one turn's calls: runs of independent calls concurrently, sequential tools alone.

    Cancelling cancels every call still running and waits for all of them, so each one's
    result event is emitted before the cancellation goes on.
    """
    results: list[ToolResult] = []
    batch: list[ToolCall] = []
    run = run_one if turn.tracing is None else _traced

    async def flush() -> None:
        if len(batch) == 1:
            results.append(await run(batch[0], turn))
        elif batch:
            results.extend(await all_of([run(c, turn) for c in batch]))
        batch.clear()

    for index, call in enumerate(calls):
        bound = turn.tools.get(call.name)
        if bound is not None and bound.tool.sequential and call.id not in turn.refused:
            await flush()
            results.append(await run(call, turn))
            if results[-1].end_turn:  # the turn waits for the user: later calls must wait too
                results.extend(_skip(later, call.name, turn) for later in calls[index + 1 :])
                return results
        else:
            batch.append(call)
    await flush()
    return results


async def all_of(work: Sequence[Awaitable[_T]]) -> list[_T]:
    """Run ``work`` concurrently; the results in order.

    Unlike a bare ``gather``, a cancelled caller cancels every child and waits until all of
    them have ended before the cancellation goes on, so no child runs on unawaited.
    """
    tasks = [asyncio.ensure_future(item) for item in work]
    try:
        await asyncio.wait(tasks)
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks)
        raise
    return [task.result() for task in tasks]


def _skip(call: ToolCall, ended_by: str, turn: Turn) -> ToolResult:
    result = tool_error(
        f"not run: {ended_by!r} ended the turn to wait for an answer; "
        "call this again afterwards if it is still needed"
    )
    turn.emit(ToolCallStart(call_id=call.id, name=call.name, arguments=call.arguments, **turn.tag))
    turn.emit(
        ToolResultEvent(
            call_id=call.id, name=call.name, content=result.content, is_error=True, **turn.tag
        )
    )
    return result


async def _traced(call: ToolCall, turn: Turn) -> ToolResult:
    """``run_one`` in a span of its own (tracing is on): the call's events happen in it."""
    assert turn.tracing is not None
    bound = turn.tools.get(call.name)
    with turn.tracing.tool(call, bound.schema.description if bound else None) as span:
        result = await run_one(call, turn)
        span.result(result)
        return result


async def run_one(call: ToolCall, turn: Turn) -> ToolResult:
    """Run ``call`` and emit its start and result events (a result even when cancelled)."""
    turn.emit(ToolCallStart(call_id=call.id, name=call.name, arguments=call.arguments, **turn.tag))
    started = time.perf_counter()

    def report(result: ToolResult) -> None:
        turn.emit(
            ToolResultEvent(
                call_id=call.id,
                name=call.name,
                content=result.content,
                is_error=result.is_error,
                duration_ms=(time.perf_counter() - started) * 1000,
                data=result.data,
                **turn.tag,
            )
        )

    try:
        result = await _execute(call, turn)
    except asyncio.CancelledError:  # every started call gets its result event
        report(tool_error("the run was cancelled while this tool ran"))
        raise
    content = truncate_middle(result.content, turn.limits.output_limit)
    if result.images:  # named in the text, within what one message may carry
        content, kept = fit_images(content, result.images)
        result = dataclasses.replace(result, content=content, images=tuple(kept))
    elif content is not result.content:
        result = dataclasses.replace(result, content=content)
    report(result)
    return result


async def _execute(call: ToolCall, turn: Turn) -> ToolResult:
    refusal = turn.refused.get(call.id)
    if refusal is not None:
        return tool_error(refusal)
    bound = turn.tools.get(call.name)
    if bound is None:
        return tool_error(_unknown_tool(call.name, list(turn.tools)))
    try:
        args = parse_arguments(call, bound.schema, turn.stop_note, turn.arguments.get(call.id))
    except ToolError as exc:
        return tool_error(str(exc))
    if turn.gate is not None:
        instead = await turn.gate.check(call, bound, args)
        if instead is not None:
            return instead
    timeout = bound.tool.timeout or turn.limits.tool_timeout
    try:
        if not bound.tool.runs_in_thread:
            async with asyncio.timeout(timeout):
                return await _invoke(bound, args)
        async with turn.thread_gate, asyncio.timeout(timeout):
            return await _invoke(bound, args)
    except ToolError as exc:
        return tool_error(str(exc))
    except TimeoutError:
        return tool_error(f"tool {call.name!r} timed out after {timeout:g} s and was stopped")
    except Exception as exc:
        return tool_error(f"tool {call.name!r} failed: {type(exc).__name__}: {exc}")


async def _invoke(bound: BoundTool, args: object) -> ToolResult:
    try:
        return await bound.tool.invoke(args)
    except SystemExit as exc:  # caught inside the task: past it, asyncio would stop the loop
        return tool_error(f"tool {bound.name!r} failed: SystemExit: {exc}")


def _unknown_tool(name: str, available: list[str]) -> str:
    hint = did_you_mean(name, available)
    hint = f" {hint[:1].upper()}{hint[1:]}" if hint else ""
    listing = ", ".join(available) if available else "none"
    return f"unknown tool {name!r}.{hint} Available tools: {listing}."


def not_run(calls: Sequence[ToolCall], why: str) -> list[Message]:
    """A result for each of ``calls``, which did not run because of ``why``.

    What keeps a history valid when a run ends before a reply's calls run.
    """
    return [
        Message(
            role="tool",
            content=f"Error: not run: {why}",
            tool_call_id=call.id,
            name=call.name,
            is_error=True,
        )
        for call in calls
    ]


def tool_error(message: str) -> ToolResult:
    """An error result: ``Error: message``."""
    return ToolResult(content=f"Error: {message}", is_error=True)
