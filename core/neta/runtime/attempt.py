"""The loop: ask the model, run the tools it calls, repeat until it answers."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from neta.catalog import ToolSchema
from neta.errors import ConfigError, ProviderError, ToolError
from neta.events import (
    Outcome,
    RunFinished,
    RunStarted,
    TextDelta,
    ToolCallStart,
    ToolResultEvent,
)
from neta.messages import Message, Usage
from neta.providers.base import ModelRequest, Provider
from neta.session_tools import BoundTool
from neta.suggest import did_you_mean
from neta.tools import ToolCall, ToolResult
from neta.truncation import truncate_middle

DEFAULT_MAX_TURNS = 50
"""Model turns per run before it stops with outcome ``max_turns``."""

DEFAULT_TOOL_TIMEOUT = 120.0
"""Seconds a tool call may take unless the tool sets its own ``timeout``."""

DEFAULT_OUTPUT_LIMIT = 30_000
"""Characters of one tool result the model sees; longer output keeps its head and tail."""

_log = logging.getLogger(__name__)

# Why a reply stopped, when that is worth saying (provider finish reasons).
_STOP_NOTES = {
    "length": "the reply was cut off at the model's output token limit",
    "content_filter": "the provider's content filter cut the reply off",
}


@dataclass(frozen=True)
class AttemptResult:
    """How a run ended.

    Attributes:
        outcome: ``completed``, ``awaiting_input``, ``max_turns``, ``cancelled`` or ``error``.
        text: the final reply (for ``awaiting_input``, the question for the user).
        reason: why it ended, in words (empty when the model simply finished).
        turns: how many times the model was asked.
        usage: tokens summed over the turns that reported them.
    """

    outcome: Outcome
    text: str
    reason: str = ""
    turns: int = 0
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class _Limits:
    max_turns: int
    tool_timeout: float
    output_limit: int
    # Plain-function tools ran one at a time on the loop before they ran in threads; they
    # still run one at a time, so tools sharing session state need no locks of their own.
    thread_gate: asyncio.Lock = field(default_factory=asyncio.Lock)


def safe_event_sink(on_event: Callable[[Any], object]) -> Callable[[Any], None]:
    """Wrap a host's ``on_event`` so that a failing callback cannot break the run.

    The first exception it raises is logged (logger ``neta.runtime.attempt``) and the run
    goes on; events keep being offered to it. A coroutine function is refused up front: the
    runtime calls ``on_event`` synchronously and would never await it.

    Raises:
        ConfigError: ``on_event`` is a coroutine function.
    """
    if inspect.iscoroutinefunction(on_event) or inspect.iscoroutinefunction(
        type(on_event).__call__  # an object with an async __call__
    ):
        raise ConfigError(
            "on_event must be a plain function: the runtime calls it synchronously and never "
            "awaits it (to do async work, hand the event to a queue or create a task)"
        )
    failed = False

    def sink(event: Any) -> None:
        nonlocal failed
        try:
            returned = on_event(event)
            if inspect.iscoroutine(returned):
                returned.close()
                raise ConfigError("on_event returned a coroutine; it must be a plain function")
        except Exception:
            if not failed:
                _log.exception("on_event raised on a %s event; the run goes on", _kind(event))
            failed = True

    return sink


def _kind(event: Any) -> str:
    return str(getattr(event, "type", type(event).__name__))


async def run_attempt(
    *,
    provider: Provider,
    system_prompt: str,
    history: list[Message],
    tools: Mapping[str, BoundTool],
    on_event: Callable[[Any], None],
    model: str = "",
    max_turns: int = DEFAULT_MAX_TURNS,
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    strict_schemas: bool = False,
    session_id: str = "",
    agent_id: str | None = None,
) -> AttemptResult:
    """Run the model and its tool calls on ``history`` until it answers without calling a tool.

    ``history`` ends with the user's message and is extended in place with every assistant
    and tool message. Whatever the model gets wrong (unknown tool, bad JSON, invalid
    arguments, a tool that raises or times out) becomes an error result it reads. Provider
    failures end the run with outcome ``error``. Cancelling the task cancels running tools and
    emits ``run_finished`` with outcome ``cancelled`` before the cancellation propagates; any
    other exception (a provider's bug) emits outcome ``error`` and propagates. An ``on_event``
    that raises is logged once and does not stop the run (see ``safe_event_sink``).
    """
    on_event = safe_event_sink(on_event)
    tag: dict[str, Any] = {"session_id": session_id, "agent_id": agent_id}
    limits = _Limits(max_turns, tool_timeout, output_limit)
    offered = [bound.schema.openai_tool(strict=strict_schemas) for bound in tools.values()]
    first = history[-1].content if history and history[-1].role == "user" else ""
    on_event(RunStarted(message=first or "", tools=list(tools), **tag))
    usage = Usage()
    turns = 0

    def finish(outcome: Outcome, text: str = "", reason: str = "") -> AttemptResult:
        on_event(RunFinished(outcome=outcome, text=text, reason=reason, turns=turns, **tag))
        return AttemptResult(outcome, text, reason, turns, usage)

    try:
        while True:
            if turns >= limits.max_turns:
                return finish(
                    "max_turns",
                    reason=f"stopped after {limits.max_turns} turns without a final answer",
                )
            turns += 1
            request = ModelRequest(
                messages=[Message(role="system", content=system_prompt), *history],
                tools=offered,
                model=model,
            )
            try:
                response = await provider.complete(
                    request, lambda piece: on_event(TextDelta(text=piece, **tag))
                )
            except ProviderError as exc:
                return finish("error", reason=str(exc))
            if response.usage is not None:
                usage = usage + response.usage
            history.append(
                Message(
                    role="assistant",
                    content=response.text or None,
                    tool_calls=list(response.tool_calls),
                )
            )
            stop_note = _STOP_NOTES.get(response.finish_reason or "", "")
            if not response.tool_calls:
                return finish("completed", text=response.text, reason=stop_note)
            turn = _Turn(tools, limits, on_event, tag, stop_note)
            results = await _run_calls(response.tool_calls, turn)
            for call, result in zip(response.tool_calls, results, strict=True):
                history.append(
                    Message(
                        role="tool", content=result.content, tool_call_id=call.id, name=call.name
                    )
                )
            ending = next((r for r in results if r.end_turn), None)
            if ending is not None:
                return finish(
                    "awaiting_input", text=ending.content, reason="a tool awaits the user"
                )
    except asyncio.CancelledError:
        finish("cancelled", reason="the run was cancelled")
        raise
    except Exception as exc:  # not handled here: the run's listeners still learn it ended
        finish("error", reason=f"{type(exc).__name__}: {exc}")
        raise


@dataclass(frozen=True)
class _Turn:
    """What running one turn's tool calls needs."""

    tools: Mapping[str, BoundTool]
    limits: _Limits
    emit: Callable[[Any], None]
    tag: dict[str, Any]
    stop_note: str  # why the reply was cut, if it was: its last call's arguments may be too


async def _run_calls(calls: Sequence[ToolCall], turn: _Turn) -> list[ToolResult]:
    """Run one turn's calls: runs of independent calls concurrently, sequential tools alone."""
    results: list[ToolResult] = []
    batch: list[ToolCall] = []

    async def flush() -> None:
        results.extend(await asyncio.gather(*(_run_one(c, turn) for c in batch)))
        batch.clear()

    for index, call in enumerate(calls):
        bound = turn.tools.get(call.name)
        if bound is not None and bound.tool.sequential:
            await flush()
            results.append(await _run_one(call, turn))
            if results[-1].end_turn:  # the turn waits for the user: later calls must wait too
                results.extend(_skip(later, call.name, turn) for later in calls[index + 1 :])
                return results
        else:
            batch.append(call)
    await flush()
    return results


def _skip(call: ToolCall, ended_by: str, turn: _Turn) -> ToolResult:
    result = _error(
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


async def _run_one(call: ToolCall, turn: _Turn) -> ToolResult:
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
        report(_error("the run was cancelled while this tool ran"))
        raise
    content = truncate_middle(result.content, turn.limits.output_limit)
    if content is not result.content:
        result = ToolResult(content, result.is_error, result.end_turn, result.data)
    report(result)
    return result


async def _execute(call: ToolCall, turn: _Turn) -> ToolResult:
    bound = turn.tools.get(call.name)
    if bound is None:
        return _error(_unknown_tool(call.name, list(turn.tools)))
    try:
        args = _parse_arguments(call, bound.schema, turn.stop_note)
    except ToolError as exc:
        return _error(str(exc))
    timeout = bound.tool.timeout or turn.limits.tool_timeout
    try:
        if not bound.tool.runs_in_thread:
            return await asyncio.wait_for(_invoke(bound, args), timeout)
        async with turn.limits.thread_gate:
            return await asyncio.wait_for(_invoke(bound, args), timeout)
    except ToolError as exc:
        return _error(str(exc))
    except TimeoutError:
        return _error(f"tool {call.name!r} timed out after {timeout:g} s and was stopped")
    except Exception as exc:
        return _error(f"tool {call.name!r} failed: {type(exc).__name__}: {exc}")


async def _invoke(bound: BoundTool, args: Any) -> ToolResult:
    try:
        return await bound.tool.invoke(args)
    except SystemExit as exc:  # caught inside the task: past it, asyncio would stop the loop
        return _error(f"tool {bound.name!r} failed: SystemExit: {exc}")


def _parse_arguments(call: ToolCall, schema: ToolSchema, stop_note: str = "") -> Any:
    text = call.arguments.strip() or "{}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        cut = (
            f" Your reply stopped early ({stop_note}), so the arguments are incomplete: "
            "make the call smaller, e.g. write a large file in parts."
            if stop_note
            else ""
        )
        raise ToolError(
            f"arguments for {call.name!r} are not valid JSON ({exc.msg} at position {exc.pos}); "
            f"send one JSON object that matches the tool's schema.{cut}"
        ) from None
    if not isinstance(data, dict):
        raise ToolError(
            f"arguments for {call.name!r} must be a JSON object, not {type(data).__name__}"
        )
    return schema.validate_arguments(data)


def _unknown_tool(name: str, available: list[str]) -> str:
    hint = did_you_mean(name, available)
    hint = f" {hint[:1].upper()}{hint[1:]}" if hint else ""
    listing = ", ".join(available) if available else "none"
    return f"unknown tool {name!r}.{hint} Available tools: {listing}."


def _error(message: str) -> ToolResult:
    return ToolResult(content=f"Error: {message}", is_error=True)
