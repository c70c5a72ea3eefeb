"""Reading a tool call's arguments: JSON text in, what the tool's schema accepts out."""

from __future__ import annotations

import json

from neta.catalog import ToolSchema
from neta.errors import ToolError
from neta.tools import ToolCall

MAX_ARGUMENT_DEPTH = 64
"""How deeply a call's arguments may nest (the object itself is level 1).

Deeper arguments are refused before they are stored: a provider turning the history into a
request must never meet a value too deep to read or write again."""


def parse_arguments(
    call: ToolCall, schema: ToolSchema, stop_note: str = "", data: dict[str, object] | None = None
) -> object:
    """The arguments of ``call``, checked by the tool's ``schema``.

    Every way the text can fail to become arguments (see ``read_arguments``, or invalid for
    the schema) raises ``ToolError`` with what the model should do instead; nothing else
    escapes. ``stop_note`` says why the reply was cut, when it was. ``data`` is the text
    already read (``read_arguments``), when it was.

    Returns:
        What ``schema.validate_arguments`` returns: the pydantic model instance, or the checked
        ``dict`` of a JSON-Schema tool.

    Raises:
        ToolError: the arguments cannot be read or are invalid.
    """
    if data is None:
        data = read_arguments(call, stop_note)
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


def read_arguments(call: ToolCall, stop_note: str = "") -> dict[str, object]:
    """The JSON object ``call``'s arguments hold (empty text is an empty object).

    Raises:
        ToolError: the text is not JSON, not an object, or nests deeper than
            ``MAX_ARGUMENT_DEPTH``; the message says what the model should send instead.
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
    except ValueError as exc:  # a number too long to read
        raise ToolError(f"arguments for {call.name!r} cannot be read: {exc}") from None
    if not isinstance(data, dict):
        raise ToolError(
            f"arguments for {call.name!r} must be a JSON object, not {type(data).__name__}"
        )
    if _deeper_than(data, MAX_ARGUMENT_DEPTH):
        raise ToolError(_too_deep(call))
    return data


def _deeper_than(value: dict[str, object], limit: int) -> bool:
    """Whether objects and arrays nest in ``value`` more than ``limit`` levels."""
    stack: list[tuple[dict[str, object] | list[object], int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, dict | list):
                if depth == limit:
                    return True
                stack.append((child, depth + 1))
    return False


def _too_deep(call: ToolCall) -> str:
    return (
        f"arguments for {call.name!r} are nested too deeply (more than {MAX_ARGUMENT_DEPTH} "
        "levels); send one JSON object that matches the tool's schema, without deep nesting."
    )
