"""``OtlpCollector``: a loopback HTTP server that takes OTLP/HTTP trace exports, for tests.

It answers ``POST /v1/traces`` (protobuf ``ExportTraceServiceRequest`` bodies, as the OTLP/HTTP
exporter sends them) with an empty success and keeps every body; ``spans`` decodes them.
"""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback_server import LoopbackServer


@dataclass(frozen=True)
class ExportedSpan:
    """A span as it arrived: its name, ids, attributes, events and the service that sent it."""

    name: str
    span_id: bytes
    parent_span_id: bytes
    trace_id: bytes
    kind: int
    attributes: dict[str, Any]
    events: list[str]
    service: str


class OtlpCollector:
    """The server; use as a context manager. ``endpoint`` is ``OTEL_EXPORTER_OTLP_ENDPOINT``."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.paths: list[str] = []
        self.content_types: list[str] = []
        self._lock = threading.Lock()
        self._http = LoopbackServer(self._handler())

    @property
    def endpoint(self) -> str:
        return self._http.root

    def __enter__(self) -> OtlpCollector:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop()

    def spans(self) -> list[ExportedSpan]:
        """Every span of every export received, decoded."""
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        found = []
        with self._lock:
            bodies = list(self.bodies)
        for body in bodies:
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            for resource_spans in request.resource_spans:
                resource = _attributes(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        found.append(
                            ExportedSpan(
                                name=span.name,
                                span_id=span.span_id,
                                parent_span_id=span.parent_span_id,
                                trace_id=span.trace_id,
                                kind=span.kind,
                                attributes=_attributes(span.attributes),
                                events=[event.name for event in span.events],
                                service=str(resource.get("service.name", "")),
                            )
                        )
        return found

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        collector = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                with collector._lock:
                    collector.paths.append(self.path)
                    collector.content_types.append(self.headers.get("Content-Type", ""))
                    collector.bodies.append(body)
                self.send_response(200 if self.path == "/v1/traces" else 404)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

        return Handler


def _attributes(pairs: Any) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for pair in pairs:
        value = pair.value
        kind = value.WhichOneof("value")
        if kind == "array_value":
            values[pair.key] = [getattr(v, v.WhichOneof("value")) for v in value.array_value.values]
        elif kind is not None:
            values[pair.key] = getattr(value, kind)
    return values
