"""The spans a run makes once tracing is on: the run, its model calls, its tool calls.

Only ``neta.tracing.enable`` imports this module (it imports OpenTelemetry); the runtime gets a
``Tracing`` from ``neta.tracing.active()`` and asks it for spans. Names and attributes follow
the OpenTelemetry GenAI semantic conventions; what is Neta's own is named ``neta.*``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from neta.errors import ProviderError
from neta.events import Event
from neta.messages import Usage
from neta.providers.base import ModelRequest, ModelResponse, Provider, TextSink
from neta.tools import ToolCall, ToolResult
from neta.tracing.content import SentMessages, reply_json

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer, TracerProvider
    from opentelemetry.util.types import AttributeValue

OTHER = "_OTHER"
"""What ``gen_ai.provider.name`` and ``error.type`` say when nothing more precise is known."""

TOOL_ERROR = "tool_error"
"""The ``error.type`` of a tool call whose result is an error (the model reads why)."""

_STREAMED = frozenset({"text_delta", "tool_output"})  # pieces of a reply or an output
# Without content capture, an event keeps only the fields that hold no text the model, a tool,
# a provider or a person wrote: those listed here (a type not listed keeps none). An allow
# list, so that a field added later is left out until someone decides it holds no content.
_PLAIN = {
    "run_started": ("tools",),
    "tool_call_start": ("call_id", "name"),
    "tool_result": ("call_id", "name", "is_error", "duration_ms"),
    "tool_progress": ("name", "progress", "total"),
    "todo_update": ("counts", "revision"),
    "clarify_request": ("request_id",),
    "approval_request": ("request_id",),
    "permission_decision": ("call_id", "name", "action", "decided_by", "at"),
    "provider_retry": ("attempt", "max_tries", "delay", "reason"),
    "model_fallback": ("failed", "model", "reason"),
    "run_finished": ("outcome", "reason", "turns"),
}
_TAGS = ("type", "session_id", "agent_id")  # the span says whose the event is


@dataclass(frozen=True)
class Tracing:
    """Makes the spans of runs with ``tracer``; content recorded when ``capture_content``.

    ``provider`` is the tracer provider given (``None``: the global one).
    """

    tracer: Tracer
    capture_content: bool = False
    provider: TracerProvider | None = None

    @classmethod
    def made_with(
        cls, provider: TracerProvider | None, *, capture_content: bool = False
    ) -> Tracing:
        """Tracing with a tracer of ``provider`` (``None``: the global provider, looked up late)."""
        try:
            version = importlib.metadata.version("neta")
        except importlib.metadata.PackageNotFoundError:
            version = ""
        tracer = trace.get_tracer("neta", version, tracer_provider=provider)
        return cls(tracer, capture_content, provider)

    def flush(self, timeout: float) -> bool:
        """Have the provider send the spans it holds; whether it did within ``timeout`` s.

        A provider that cannot flush (the API's own, which sends nothing) has nothing to send.
        """
        provider = self.provider or trace.get_tracer_provider()
        force_flush = getattr(provider, "force_flush", None)
        if not callable(force_flush):
            return True
        return bool(force_flush(int(timeout * 1000)))

    @contextlib.contextmanager
    def run(
        self,
        *,
        session_id: str,
        agent_name: str = "",
        agent_id: str | None = None,
        depth: int = 0,
        provider: Provider | None = None,
        model: str = "",
    ) -> Iterator[RunSpan]:
        """The span ``invoke_agent`` of one run, current while the run goes on.

        ``agent_id`` is a crew child's id (its events carry it), ``depth`` how deep it nests.
        A run that raises ends as an error; a cancelled one with outcome ``cancelled``.
        """
        attributes: dict[str, AttributeValue] = {"gen_ai.operation.name": "invoke_agent"}
        if provider is not None:
            attributes.update(_provider_attributes(provider))
        if agent_name:
            attributes["gen_ai.agent.name"] = agent_name
        if agent_id is not None:
            attributes["gen_ai.agent.id"] = agent_id
        attributes["gen_ai.conversation.id"] = session_id
        model = model or _default_model(provider)
        if model:
            attributes["gen_ai.request.model"] = model
        if depth:
            attributes["neta.agent.depth"] = depth
        name = f"invoke_agent {agent_name}" if agent_name else "invoke_agent"
        with self._span(name, attributes) as span:
            try:
                yield RunSpan(span, agent_id, self.capture_content)
            except asyncio.CancelledError:
                span.set_attribute("neta.run.outcome", "cancelled")
                raise
            except Exception:
                span.set_attribute("neta.run.outcome", "error")
                raise

    def traced(self, provider: Provider, conversation_id: str) -> Provider:
        """``provider`` with each call a ``chat`` span of the conversation ``conversation_id``."""
        return TracedProvider(provider, self, conversation_id)

    @contextlib.contextmanager
    def tool(self, call: ToolCall, description: str | None = None) -> Iterator[ToolSpan]:
        """The span ``execute_tool`` of one call, current while the call runs."""
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
        }
        if description:
            attributes["gen_ai.tool.description"] = description
        if self.capture_content:
            attributes["gen_ai.tool.call.arguments"] = call.arguments
        # an exception here is the runtime's bug, not the tool's: a tool's failure is a result
        with self._span(f"execute_tool {call.name}", attributes) as span:
            yield ToolSpan(span, self.capture_content)

    @contextlib.contextmanager
    def _span(self, name: str, attributes: dict[str, AttributeValue]) -> Iterator[Span]:
        """An internal span, current while it lasts; what raises through it fails it."""
        with self.tracer.start_as_current_span(
            name,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                yield span
            except Exception as exc:
                span.record_exception(exc)
                _failed(span, error_type(exc), f"{type(exc).__name__}: {exc}")
                raise


class RunSpan:
    """The span of one run: its events are added as it emits them, its outcome at the end."""

    def __init__(self, span: Span, agent_id: str | None, capture_content: bool) -> None:
        self.span = span
        self._agent_id = agent_id
        self._capture = capture_content

    def event(self, event: Event) -> None:
        """Add ``event`` to the span it happened in (a tool's, or the run's).

        The events of the run's sub-agents pass through it too: their own runs added them.
        """
        if event.agent_id not in (None, self._agent_id) or event.type in _STREAMED:
            return
        current = trace.get_current_span()
        into = current if current.is_recording() else self.span
        into.add_event(f"neta.{event.type}", event_attributes(event, self._capture))

    def finished(
        self,
        outcome: str,
        *,
        turns: int,
        usage: Usage,
        reason: str = "",
        error: BaseException | None = None,
    ) -> None:
        """How the run ended; an outcome ``error`` fails the span (``error.type``: ``error``'s)."""
        self.span.set_attribute("neta.run.outcome", outcome)
        self.span.set_attribute("neta.run.turns", turns)
        self.span.set_attributes(_usage_attributes(usage))
        if outcome == "error":
            _failed(self.span, error_type(error) if error is not None else OTHER, reason)


class ToolSpan:
    """The span of one tool call."""

    def __init__(self, span: Span, capture_content: bool) -> None:
        self.span = span
        self._capture = capture_content

    def result(self, result: ToolResult) -> None:
        """The call's result: an error result fails the span (its text is content)."""
        if self._capture:
            self.span.set_attribute("gen_ai.tool.call.result", result.content)
        if result.is_error:
            _failed(self.span, TOOL_ERROR, result.content if self._capture else None)


class TracedProvider:
    """A provider each of whose calls is a ``chat`` span (what a retry or a fallback tries too)."""

    def __init__(self, provider: Provider, tracing: Tracing, conversation_id: str) -> None:
        self.provider = provider
        self._tracing = tracing
        self._conversation_id = conversation_id
        self._provider_attributes = _provider_attributes(provider)
        self._default_model = _default_model(provider)
        self._sent = SentMessages()

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """The provider's answer, traced."""
        model = request.model or self._default_model
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "chat",
            **self._provider_attributes,
            "gen_ai.conversation.id": self._conversation_id,
        }
        if model:
            attributes["gen_ai.request.model"] = model
        if request.output is not None:
            attributes["gen_ai.output.type"] = "json"
        capture = self._tracing.capture_content
        if capture:
            system, sent = self._sent.json(request.messages)
            attributes["gen_ai.system_instructions"] = system
            attributes["gen_ai.input.messages"] = sent
        with self._tracing.tracer.start_as_current_span(
            f"chat {model}" if model else "chat",
            kind=SpanKind.CLIENT,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                response = await self.provider.complete(request, on_text)
            except Exception as exc:
                _failed(span, error_type(exc), str(exc) or type(exc).__name__)
                raise
            span.set_attributes(_response_attributes(response, capture))
            return response


def error_type(error: BaseException) -> str:
    """``error.type`` for ``error``: a provider's HTTP status, ``timeout``, or the class's name.

    Built-in exceptions go by their bare name (``KeyError``), others by their full name
    (``neta.errors.ProviderError``).
    """
    if isinstance(error, ProviderError) and error.status is not None:
        return str(error.status)
    if isinstance(error, TimeoutError):
        return "timeout"
    kind = type(error)
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


def event_attributes(event: Event, capture_content: bool) -> dict[str, AttributeValue]:
    """An event's fields as span event attributes; without content capture, only ``_PLAIN``'s.

    Empty ones are left out; a value OpenTelemetry cannot hold (a mapping) is its JSON.
    """
    kept = None if capture_content else _PLAIN.get(event.type, ())
    attributes: dict[str, AttributeValue] = {}
    for key, value in event:
        if key in _TAGS or (kept is not None and key not in kept) or value is None or value == "":
            continue
        attributes[key] = _attribute_value(value)
    return attributes


def _attribute_value(value: object) -> AttributeValue:
    if isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return json.dumps(value, default=str)


def _failed(span: Span, kind: str, description: str | None) -> None:
    span.set_attribute("error.type", kind)
    span.set_status(Status(StatusCode.ERROR, description or None))


def _provider_attributes(provider: Provider) -> dict[str, AttributeValue]:
    """``gen_ai.provider.name`` (and the older ``gen_ai.system``): the provider's ``name``."""
    name = getattr(provider, "name", None)
    system = name if isinstance(name, str) and name else OTHER
    return {"gen_ai.provider.name": system, "gen_ai.system": system}


def _default_model(provider: Provider | None) -> str:
    model = getattr(provider, "model", "")
    return model if isinstance(model, str) else ""


def _usage_attributes(usage: Usage | None) -> dict[str, AttributeValue]:
    if usage is None or not (usage.input_tokens or usage.output_tokens):
        return {}
    attributes: dict[str, AttributeValue] = {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
    }
    if usage.cache_read_tokens:
        attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read_tokens
    if usage.cache_creation_tokens:
        attributes["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_creation_tokens
    return attributes


def _response_attributes(response: ModelResponse, capture: bool) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {}
    if response.model:
        attributes["gen_ai.response.model"] = response.model
    if response.id:
        attributes["gen_ai.response.id"] = response.id
    if response.finish_reason:
        attributes["gen_ai.response.finish_reasons"] = (response.finish_reason,)
    attributes.update(_usage_attributes(response.usage))
    if capture:
        attributes["gen_ai.output.messages"] = reply_json(response)
    return attributes
