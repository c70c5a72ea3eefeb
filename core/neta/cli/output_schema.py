"""``neta run --output-schema FILE``: the answer must be JSON that fits a JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from neta.errors import ConfigError, os_reason
from neta.runtime.output import prepared

OutputSchemaOpt = typer.Option(
    None,
    "--output-schema",
    metavar="FILE",
    help="The answer must be a JSON object that fits this JSON Schema; it is printed as JSON "
    "(a model that never gives one fails the run).",
    show_default=False,
)
"""``--output-schema``: a JSON Schema file the answer must fit."""


def read_output_schema(path: Path | None) -> dict[str, Any] | None:
    """The JSON Schema at ``path`` (``None``: no schema was given).

    Raises:
        typer.BadParameter: the file cannot be read, is not JSON, or is not a JSON Schema of
            an object.
    """
    if path is None:
        return None
    try:
        schema = json.loads(path.expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise typer.BadParameter(
            f"cannot read {str(path)!r}: {os_reason(exc)}", param_hint="--output-schema"
        ) from None
    except ValueError as exc:
        raise typer.BadParameter(
            f"{str(path)!r} is not JSON: {exc}", param_hint="--output-schema"
        ) from None
    if not isinstance(schema, dict):
        raise typer.BadParameter(
            f"{str(path)!r} holds no JSON Schema (not an object)", param_hint="--output-schema"
        )
    try:
        prepared(schema)
    except ConfigError as exc:
        raise typer.BadParameter(f"{str(path)!r}: {exc}", param_hint="--output-schema") from None
    return schema
