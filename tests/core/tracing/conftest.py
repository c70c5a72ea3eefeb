"""The tracing tests' fixtures: runs traced into an in-memory exporter (``spans_kit``)."""

from tests.core.tracing.spans_kit import content_spans, spans

__all__ = ["content_spans", "spans"]
