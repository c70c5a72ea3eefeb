"""The loop: ask the model, run the tools it calls, repeat until it answers."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neta.errors import ConfigError, ProviderError
from neta.events import ApprovalRequested, Event, Outcome, RunFinished, RunStarted, TextDelta
from neta.messages import Message, Usage, close_interrupted_calls, deferred_approval_id
from neta.providers.base import Conversation, ModelRequest, Provider, ToolDefinition
from neta.runtime.gate import Gate
from neta.runtime.limits import RunLimits
from neta.runtime.output import InvalidAnswer, Output, RejectedAnswer, answer_results, final_answer
from neta.runtime.reply_check import check_reply
from neta.runtime.tool_calls import EventTag, Turn, not_run, run_calls
from neta.runtime.usage_limits import LimitCheck
from neta.session import EventSink
from neta.session_tools import BoundTool
from neta.tools import ToolCall, ToolResult

if TYPE_CHECKING:
    from neta.tracing.spans import Tracing

AWAITING_APPROVAL = "a tool call awaits approval"
"""The reason a run ends with when a call waits for the next message to approve it."""

Checkpoint = Callable[[], Awaitable[None]]
"""Awaited before each model call and before a turn's tool calls run (``run_attempt``)."""

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
        outcome: ``completed``, ``awaiting_input``, ``max_turns``, ``limit``, ``cancelled``
            or ``error``.
        text: the final reply (for ``awaiting_input``, the question for the user).
        reason: why it ended, in words (empty when the model simply finished).
        turns: how many times the model was asked.
        usage: tokens summed over the turns that reported them.
        limit: the usage limit reached (outcome ``limit``).
        output: the validated answer of a run with an output type that completed.
        rejected: the last answer of a run with an output type that never gave a valid one
            (outcome ``error``).
        error: what ended a run with outcome ``error``, when something raised (a provider's
            failure, the turn's ``TimeoutError``).
    """

    outcome: Outcome
    text: str
    reason: str = ""
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    limit: str = ""
    output: object = None
    rejected: RejectedAnswer | None = None
    error: BaseException | None = None


def safe_event_sink(on_event: Callable[[Event], object]) -> EventSink:
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

    def sink(event: Event) -> None:
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


def _kind(event: Event) -> str:
    return str(getattr(event, "type", type(event).__name__))


async def run_attempt(
    *,
    provider: Provider,
    system_prompt: str,
    history: list[Message],
    tools: Mapping[str, BoundTool],
    on_event: EventSink,
    limits: RunLimits,
    model: str = "",
    session_id: str = "",
    agent_id: str | None = None,
    offered_tools: Sequence[ToolDefinition] | None = None,
    before_turn: Callable[[list[Message]], object] | None = None,
    gate: Gate | None = None,
    resume: Sequence[ToolCall] = (),
    follow_up: Message | None = None,
    checkpoint: Checkpoint | None = None,
    output: Output[object] | None = None,
    limit_check: LimitCheck | None = None,
    tracing: Tracing | None = None,
) -> AttemptResult:
    """Run the model and its tool calls on ``history`` until it answers without calling a tool.

    ``history`` ends with the user's message and is extended in place with every assistant
    and tool message. Whatever the model gets wrong (an invalid or unknown tool name, reused
    call ids, bad or too deeply nested JSON, invalid arguments, too many calls or too large a
    reply, a tool that raises or times out) becomes an error result it reads, and what is
    stored is always a history the provider accepts. Provider failures, and a turn that
    takes longer than ``limits.turn_timeout`` seconds, end the run with outcome ``error``.
    Cancelling the task cancels running tools, waits for them, and emits ``run_finished``
    with outcome ``cancelled`` before the cancellation propagates; any other exception (a
    provider's bug) emits outcome ``error`` and propagates. An ``on_event`` that raises is
    logged once and does not stop the run (see ``safe_event_sink``).

    ``offered_tools`` is the tools list sent to the model, when the caller keeps one (it
    is built from ``tools`` otherwise); ``before_turn`` is called with ``history`` before each
    model turn (compaction runs there).

    ``gate`` decides each call before it runs (``None``: every call runs). A call it leaves
    pending (to be approved in the next message) gets no result: the run ends with outcome
    ``awaiting_input`` and the request's question as its text. ``resume`` are such calls of
    the last assistant message of ``history``, run first (with the answers the gate holds)
    before the model is asked again, and ``follow_up`` (the user's message) after them.

    ``checkpoint`` is awaited before each model call and before a turn's tool calls run, with
    ``history`` as it then stands (a host saves the session there). Whatever it raises ends
    the run as any exception does, before the model is asked or any tool runs: nothing
    happens that the saved history does not show.

    ``output``: the final answer must have that type. The request carries its schema and
    offers its tool; a reply that calls the tool (or, without any call, whose text is the
    JSON) is the answer: valid, it ends the run (``AttemptResult.output``); invalid, the model
    is told what is wrong and answers again, ``limits.output_retries`` times at most, then
    the run ends with outcome ``error`` and the answer in ``AttemptResult.rejected``.

    ``limit_check`` is called before each model call and before a reply's tool calls run; the
    usage limit it reports, if any, ends the run there with outcome ``limit`` (the calls that
    did not run answered so).

    ``tracing``: each tool call is a span of its own (``neta.tracing``).
    """
    on_event = safe_event_sink(on_event)
    tag: EventTag = {"session_id": session_id, "agent_id": agent_id}
    thread_gate = asyncio.Lock()
    if offered_tools is None:
        offered_tools = [
            bound.schema.openai_tool(strict=limits.strict_schemas) for bound in tools.values()
        ]
    offered = list(offered_tools)
    wanted = output.schema if output is not None else None
    if wanted is not None:
        offered.append(wanted.tool)
    answers = 0
    system = (Message(role="system", content=system_prompt),)
    names = list(tools)
    first = history[-1].content if history and history[-1].role == "user" else ""
    on_event(RunStarted(message=first or "", tools=names, **tag))
    usage = Usage()
    turns = 0
    used_ids = {call.id for message in history for call in message.tool_calls}

    def finish(outcome: Outcome, text: str = "", reason: str = "", **ending: Any) -> AttemptResult:
        on_event(RunFinished(outcome=outcome, text=text, reason=reason, turns=turns, **tag))
        return AttemptResult(outcome, text, reason, turns, usage, **ending)

    def on_text(piece: str) -> None:
        on_event(TextDelta(text=piece, **tag))

    def emit_tag(event: ApprovalRequested) -> None:
        on_event(event.model_copy(update=tag))

    def record(calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> None:
        pending = {request.request_id for request in gate.pending} if gate else set()
        for call, result in zip(calls, results, strict=True):
            if call.id in pending:
                continue  # no result yet: the next message approves or denies it
            history.append(
                Message(
                    role="tool",
                    content=result.content,
                    tool_call_id=call.id,
                    name=call.name,
                    is_error=result.is_error,
                    permission=gate.decided.pop(call.id, None) if gate else None,
                    images=list(result.images),
                )
            )

    try:
        if resume:
            asking = max(i for i, message in enumerate(history) if message.role == "assistant")
            turn = Turn(tools, limits, thread_gate, on_event, tag, "", {}, gate, tracing=tracing)
            if checkpoint is not None:
                await checkpoint()
            record(resume, await run_calls(resume, turn))
            if gate is not None:
                gate.forget_answers()
                if gate.pending:  # calls the answers left out: they wait again
                    return finish("awaiting_input", **_deferred(gate, asking, resume, emit_tag))
            if follow_up is not None:
                history.append(follow_up)
        while True:
            if turns >= limits.max_turns:
                return finish(
                    "max_turns",
                    reason=f"stopped after {limits.max_turns} turns without a final answer",
                )
            if limit_check is not None and (crossing := limit_check(True)) is not None:
                return finish("limit", reason=crossing.reason, limit=crossing.limit)
            turns += 1
            if before_turn is not None:
                before_turn(history)
            if checkpoint is not None:
                await checkpoint()
            request = ModelRequest(Conversation(system, history), offered, model, wanted)
            deadline = asyncio.timeout(limits.turn_timeout)
            try:
                async with deadline:
                    response = await provider.complete(request, on_text)
            except ProviderError as exc:
                return finish("error", reason=str(exc), error=exc)
            except TimeoutError as exc:
                if not deadline.expired():
                    raise
                return finish("error", reason=_late(limits.turn_timeout), error=exc)
            if response.usage is not None:
                usage = usage + response.usage
            stop_note = _STOP_NOTES.get(response.finish_reason or "", "")
            reply = check_reply(
                response,
                names,
                used_ids=used_ids,
                stop_note=stop_note,
                max_calls=limits.max_calls_per_reply,
                max_chars=limits.max_reply_chars,
            )
            used_ids.update(call.id for call in reply.calls)
            asking = len(history)  # where the reply stands: deferred approvals are named by it
            history.append(reply.message)
            answer = final_answer(reply) if output is not None else None
            if answer is not None:
                assert output is not None
                answers += 1
                try:
                    value, problem = answer.value(output), ""
                except InvalidAnswer as exc:
                    value, problem = None, str(exc)
                given_up = bool(problem) and answers > limits.output_retries
                if answer.call is not None or not given_up:  # a call is always answered
                    history.extend(answer_results(reply.calls, answer.call, problem))
                if not problem:
                    return finish("completed", text=answer.text, output=value)
                if given_up:
                    rejected = RejectedAnswer(answer.text, problem, answers)
                    return finish("error", reason=rejected.reason, rejected=rejected)
                continue
            if not reply.calls:
                note = "; ".join(n for n in (stop_note, reply.note) if n)
                return finish("completed", text=reply.message.content or "", reason=note)
            if limit_check is not None and (crossing := limit_check(False)) is not None:
                history.extend(not_run(reply.calls, crossing.reason))
                return finish("limit", reason=crossing.reason, limit=crossing.limit)
            turn = Turn(
                tools, limits, thread_gate, on_event, tag, stop_note, reply.refused, gate,
                reply.arguments, tracing,
            )  # fmt: skip
            if checkpoint is not None:
                await checkpoint()
            results = await run_calls(reply.calls, turn)
            record(reply.calls, results)
            if gate is not None and gate.pending:
                return finish("awaiting_input", **_deferred(gate, asking, reply.calls, emit_tag))
            ending = next((r for r in results if r.end_turn), None)
            if ending is not None:
                return finish(
                    "awaiting_input", text=ending.content, reason="a tool awaits the user"
                )
    except asyncio.CancelledError:
        close_interrupted_calls(history)
        finish("cancelled", reason="the run was cancelled")
        raise
    except Exception as exc:  # not handled here: the run's listeners still learn it ended
        close_interrupted_calls(history)
        finish("error", reason=f"{type(exc).__name__}: {exc}")
        raise


def _deferred(
    gate: Gate,
    asking: int,
    calls: Sequence[ToolCall],
    emit: Callable[[ApprovalRequested], None],
) -> dict[str, str]:
    """Name the calls left waiting, announce them, and give the run's ending.

    Each is named by its reply's place and itself (``deferred_approval_id``); the ending's
    text is the questions.
    """
    by_id = {call.id: call for call in calls}
    order = {call.id: index for index, call in enumerate(calls)}
    # in the order of the calls, not of their checks (previews are made in threads)
    gate.pending = [
        dataclasses.replace(
            waiting, request_id=deferred_approval_id(asking, by_id[waiting.request_id])
        )
        for waiting in sorted(gate.pending, key=lambda waiting: order[waiting.request_id])
    ]
    for waiting in gate.pending:
        emit(ApprovalRequested(request_id=waiting.request_id, approval=waiting.public()))
    text = "\n\n".join(waiting.question() for waiting in gate.pending)
    return {"text": text, "reason": AWAITING_APPROVAL}


def _late(turn_timeout: float | None) -> str:
    return (
        f"the model did not finish its reply within {turn_timeout:g} s (the turn deadline); "
        "the model server may be overloaded or stalled"
    )
