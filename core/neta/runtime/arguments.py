"""Reading a tool call's arguments: JSON text in, what the tool's schema accepts out."""

from __future__ import annotations

import json

from neta.catalog import ToolSchema
from neta.errors import ToolError
from neta.tools import ToolCall


def parse_arguments(call: ToolCall, schema: ToolSchema, stop_note: str = "") -> object:
    """The arguments of ``call``, checked by the tool's ``schema``.

    Every way the text can fail to become arguments (not JSON, not an object, nested too
    deeply to read, invalid for the schema) raises ``ToolError`` with what the model should
    do instead; nothing else escapes. ``stop_note`` says why the reply was cut, when it was.

    Returns:
        What ``schema.validate_arguments`` returns: the pydantic model instance, or the checked
        ``dict`` of a JSON-Schema tool.

    Raises:
        ToolError: the arguments cannot be read or are invalid.
    """
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
    except RecursionError:
        raise ToolError(_too_deep(call)) from None
    if not isinstance(data, dict):
        raise ToolError(
            f"arguments for {call.name!r} must be a JSON object, not {type(data).__name__}"
        )
    try:
        return schema.validate_arguments(data)
    except ToolError:
        raise
    except RecursionError:
        raise ToolError(_too_deep(call)) from None
    except Exception as exc:  # a validator that raised something other than a ValueError
        raise ToolError(
            f"arguments for {call.name!r} could not be read: {type(exc).__name__}: {exc}"
        ) from None


def _too_deep(call: ToolCall) -> str:
    return (
        f"arguments for {call.name!r} are nested too deeply to read; send one JSON object "
        "that matches the tool's schema, without deep nesting."
    )
