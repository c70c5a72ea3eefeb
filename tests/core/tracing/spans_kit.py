"""Runs traced into memory (the ``spans`` fixtures), and their finished spans read: by name, by
parent, their attributes and events as plain values."""

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import neta.tracing
from neta.tracing import CAPTURE_CONTENT_VARIABLE


def in_memory_provider():
    """A tracer provider of its own (never the global one) and the exporter that keeps its spans."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


@pytest.fixture
def spans(monkeypatch):
    """Runs traced into memory from here on, their content left out; the exporter."""
    monkeypatch.delenv(CAPTURE_CONTENT_VARIABLE, raising=False)
    provider, exporter = in_memory_provider()
    neta.tracing.enable(provider)
    yield exporter
    neta.tracing.disable()


@pytest.fixture
def content_spans():
    """Runs traced into memory with their content (prompts, replies, arguments, results)."""
    provider, exporter = in_memory_provider()
    neta.tracing.enable(provider, capture_content=True)
    yield exporter
    neta.tracing.disable()


def named(exporter, prefix):
    """The finished spans whose name starts with ``prefix``, in the order they started."""
    found = [s for s in exporter.get_finished_spans() if s.name.startswith(prefix)]
    return sorted(found, key=lambda span: span.start_time)


def one(exporter, prefix):
    [span] = named(exporter, prefix)
    return span


def children(exporter, parent):
    """The spans whose parent is ``parent``, in the order they started."""
    found = [
        s
        for s in exporter.get_finished_spans()
        if s.parent is not None and s.parent.span_id == parent.context.span_id
    ]
    return sorted(found, key=lambda span: span.start_time)


def attrs(span):
    return dict(span.attributes or {})


def event_names(span):
    return [event.name for event in span.events]


def event(span, name):
    [found] = [e for e in span.events if e.name == name]
    return dict(found.attributes or {})


def failed(span):
    return span.status.status_code == StatusCode.ERROR


def content_keys(span):
    """The ``gen_ai`` attributes that hold content (prompts, replies, arguments, results)."""
    held = (
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    )
    return [key for key in held if key in attrs(span)]
