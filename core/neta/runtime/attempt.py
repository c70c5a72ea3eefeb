"""The loop: ask the model, run the tools it calls, repeat until it answers."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from neta.errors import ProviderError, ToolError
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
from neta.suggest import close_names
from neta.tools import ToolCall, ToolResult
from neta.truncation import truncate_middle

DEFAULT_MAX_TURNS = 50
DEFAULT_TOOL_TIMEOUT = 120.0
DEFAULT_OUTPUT_LIMIT = 30_000


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
    emits ``run_finished`` with outcome ``cancelled`` before the cancellation propagates.
    """
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
            if not response.tool_calls:
                return finish("completed", text=response.text)
            results = await _run_calls(response.tool_calls, tools, limits, on_event, tag)
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


async def _run_calls(
    calls: Sequence[ToolCall],
    tools: Mapping[str, BoundTool],
    limits: _Limits,
    on_event: Callable[[Any], None],
    tag: dict[str, Any],
) -> list[ToolResult]:
    """Run one turn's calls: runs of independent calls concurrently, sequential tools alone."""
    results: list[ToolResult] = []
    batch: list[ToolCall] = []

    async def flush() -> None:
        results.extend(
            await asyncio.gather(*(_run_one(c, tools, limits, on_event, tag) for c in batch))
        )
        batch.clear()

    for call in calls:
        bound = tools.get(call.name)
        if bound is not None and bound.tool.sequential:
            await flush()
            results.append(await _run_one(call, tools, limits, on_event, tag))
        else:
            batch.append(call)
    await flush()
    return results


async def _run_one(
    call: ToolCall,
    tools: Mapping[str, BoundTool],
    limits: _Limits,
    on_event: Callable[[Any], None],
    tag: dict[str, Any],
) -> ToolResult:
    on_event(ToolCallStart(call_id=call.id, name=call.name, arguments=call.arguments, **tag))
    started = time.perf_counter()
    result = await _execute(call, tools, limits)
    content = truncate_middle(result.content, limits.output_limit)
    if content is not result.content:
        result = ToolResult(content, result.is_error, result.end_turn, result.data)
    on_event(
        ToolResultEvent(
            call_id=call.id,
            name=call.name,
            content=content,
            is_error=result.is_error,
            duration_ms=(time.perf_counter() - started) * 1000,
            data=result.data,
            **tag,
        )
    )
    return result


async def _execute(call: ToolCall, tools: Mapping[str, BoundTool], limits: _Limits) -> ToolResult:
    bound = tools.get(call.name)
    if bound is None:
        return _error(_unknown_tool(call.name, list(tools)))
    try:
        args = _parse_arguments(call, bound.schema.args)
    except ToolError as exc:
        return _error(str(exc))
    timeout = bound.tool.timeout or limits.tool_timeout
    try:
        return await asyncio.wait_for(bound.tool.invoke(args), timeout)
    except ToolError as exc:
        return _error(str(exc))
    except TimeoutError:
        return _error(f"tool {call.name!r} timed out after {timeout:g} s and was stopped")
    except Exception as exc:
        return _error(f"tool {call.name!r} failed: {type(exc).__name__}: {exc}")


def _parse_arguments(call: ToolCall, model: type[BaseModel]) -> BaseModel:
    text = call.arguments.strip() or "{}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolError(
            f"arguments for {call.name!r} are not valid JSON ({exc.msg} at position {exc.pos}); "
            "send one JSON object that matches the tool's schema"
        ) from None
    if not isinstance(data, dict):
        raise ToolError(
            f"arguments for {call.name!r} must be a JSON object, not {type(data).__name__}"
        )
    fields = model.model_fields
    # strict-mode models send null for an omitted optional argument: let its default apply
    cleaned = {
        key: value
        for key, value in data.items()
        if not (value is None and key in fields and not fields[key].is_required())
    }
    try:
        return model.model_validate(cleaned)
    except ValidationError as exc:
        raise ToolError(f"invalid arguments for {call.name!r}: {_describe(exc)}") from None


def _describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error["loc"]) or "(arguments)"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def _unknown_tool(name: str, available: list[str]) -> str:
    close = close_names(name, available)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    listing = ", ".join(available) if available else "none"
    return f"unknown tool {name!r}.{hint} Available tools: {listing}."


def _error(message: str) -> ToolResult:
    return ToolResult(content=f"Error: {message}", is_error=True)
