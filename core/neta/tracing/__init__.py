"""OpenTelemetry traces of runs, after the GenAI semantic conventions (``neta[otel]``).

Off until ``enable`` is called, and then free: nothing of OpenTelemetry is imported, and a run
checks once whether tracing is on. Once on, every run is a span ``invoke_agent {agent name}``,
each model call under it a span ``chat {model}`` (each retry and each fallback model tried is
one of its own) and each tool call a span ``execute_tool {tool}``; a crew child's run is a span
under the tool call of its parent that started it. The run's events (``neta.events``) are
events of the span they happened in, named ``neta.{type}``; the text a reply streams
(``text_delta``, ``tool_output``) is not.

What the model and the tools read and write (prompts, replies, tool arguments and results, and
those parts of the events) is recorded only when asked for: ``enable(capture_content=True)``,
or ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` in the environment.

An app with its own tracer provider passes it (``enable(provider)``) or sets it as the global
one, which ``enable()`` uses; ``enable_otlp`` makes one that exports over OTLP/HTTP as the
standard ``OTEL_*`` variables say (what ``neta run --otel`` and ``neta serve --otel`` do).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from neta.errors import ConfigError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
    from opentelemetry.trace import TracerProvider

    from neta.tracing.spans import Tracing

__all__ = [
    "CAPTURE_CONTENT_VARIABLE",
    "INSTALL_HINT",
    "active",
    "disable",
    "enable",
    "enable_otlp",
    "flush",
]

CAPTURE_CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The standard variable that, set to ``true``, has content recorded (``enable`` reads it)."""

INSTALL_HINT = "pip install 'neta[otel]'"
"""What installs OpenTelemetry's API, SDK and OTLP/HTTP exporter for Neta."""

_PROTOCOLS = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
_SERVICE = "neta"  # the service name when neither OTEL_SERVICE_NAME nor the resource names one

_active: Tracing | None = None


def enable(
    tracer_provider: TracerProvider | None = None, *, capture_content: bool | None = None
) -> None:
    """Trace every run from now on, with ``tracer_provider`` (by default the global one).

    The global provider is looked up as each span starts, so it may be set after this call.
    ``capture_content``: record prompts, replies, tool arguments and results; ``None`` reads
    ``CAPTURE_CONTENT_VARIABLE`` (``true``: recorded). Calling it again replaces the settings.

    Raises:
        ConfigError: OpenTelemetry's API is not installed (``INSTALL_HINT``).
    """
    global _active
    try:
        from neta.tracing.spans import Tracing
    except ImportError as exc:
        raise ConfigError(f"tracing needs OpenTelemetry: {INSTALL_HINT}") from exc
    if capture_content is None:
        capture_content = os.environ.get(CAPTURE_CONTENT_VARIABLE, "").strip().lower() == "true"
    _active = Tracing.made_with(tracer_provider, capture_content=capture_content)


def disable() -> None:
    """Trace no run from now on (runs under way finish their spans)."""
    global _active
    _active = None


def active() -> Tracing | None:
    """What traces runs, or ``None`` while tracing is off (the runtime asks once per run)."""
    return _active


def flush(timeout: float = 30.0) -> bool:
    """Send the spans not sent yet, waiting ``timeout`` seconds at most; whether all went.

    A host calls it as it stops (``neta serve`` does), since a batching provider sends spans
    only now and then. With tracing off, there is nothing to send.
    """
    return True if _active is None else _active.flush(timeout)


def enable_otlp(*, capture_content: bool | None = None) -> SdkTracerProvider:
    """Export traces over OTLP/HTTP, configured by the ``OTEL_*`` variables, and ``enable``.

    An SDK tracer provider with a batching OTLP/HTTP (protobuf) exporter is set as the global
    provider and traces runs. The exporter reads ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
    ``..._TRACES_ENDPOINT``), ``..._HEADERS``, ``..._TIMEOUT``, ``..._COMPRESSION`` and the
    certificate variables; the batching reads ``OTEL_BSP_*``; the resource
    ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` (service ``neta`` by default).
    Its spans are sent in batches, and the rest when the process exits, ``flush`` is called,
    or the returned provider is shut down.

    Raises:
        ConfigError: the SDK or the exporter is not installed (``INSTALL_HINT``), or the
            variables ask for another protocol than ``http/protobuf``.
    """
    for name in _PROTOCOLS:
        protocol = os.environ.get(name, "").strip()
        if protocol and protocol != "http/protobuf":
            raise ConfigError(
                f"{name}={protocol}: Neta exports traces over OTLP/HTTP only "
                "(http/protobuf); unset it or set it to http/protobuf"
            )
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise ConfigError(
            f"exporting traces needs OpenTelemetry's SDK and OTLP exporter: {INSTALL_HINT}"
        ) from exc
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: _SERVICE}))
    provider = SdkTracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    enable(provider, capture_content=capture_content)
    return provider
