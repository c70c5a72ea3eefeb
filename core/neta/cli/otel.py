"""``--otel``: a command that runs agents exports OpenTelemetry traces over OTLP/HTTP.

The flag turns it on, and so does ``OTEL_TRACES_EXPORTER=otlp`` (the standard variable naming
the trace exporter; an endpoint variable alone does not, since it is often set for other
programs). The standard ``OTEL_*`` variables configure the export (``neta.tracing.enable_otlp``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import typer

from neta import tracing
from neta.errors import ConfigError
from neta.terminal_text import sanitize

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

OtelOpt = typer.Option(
    False,
    "--otel",
    help="Export OpenTelemetry traces over OTLP/HTTP, set up by the OTEL_* variables "
    "(OTEL_EXPORTER_OTLP_ENDPOINT...; also on with OTEL_TRACES_EXPORTER=otlp). "
    "Needs neta[otel].",
)
"""``--otel``: export traces over OTLP/HTTP."""

_EXPORTER_VARIABLE = "OTEL_TRACES_EXPORTER"


def start_exporting(flag: bool) -> TracerProvider | None:
    """Export the traces of runs from now on, if ``--otel`` or the environment asks.

    Returns the provider (``shutdown`` sends what is left), or ``None`` when not asked. Asked
    for by the environment alone, a failure is a warning and the command goes on untraced.

    Raises:
        ConfigError: ``--otel`` was given and the export cannot start (the extra is missing).
    """
    if flag:
        return tracing.enable_otlp()
    exporters = os.environ.get(_EXPORTER_VARIABLE, "").lower().split(",")
    if "otlp" not in (name.strip() for name in exporters):
        return None
    try:
        return tracing.enable_otlp()
    except ConfigError as exc:
        typer.echo(
            f"Warning: {_EXPORTER_VARIABLE} names otlp, but no traces are exported: "
            f"{sanitize(str(exc))}",
            err=True,
        )
        return None


@contextlib.contextmanager
def traces_exported(flag: bool) -> Iterator[None]:
    """``start_exporting(flag)`` for a command's runs; the spans not sent yet go at its end.

    Raises:
        ConfigError: as ``start_exporting``.
    """
    exporting = start_exporting(flag)
    try:
        yield
    finally:
        if exporting is not None:
            exporting.shutdown()
