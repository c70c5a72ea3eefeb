"""Reading a tool call's arguments: JSON text in, the tool's validated pydantic model out."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from neta.errors import ToolError
from neta.tools import ToolCall


def parse_arguments(call: ToolCall, model: type[BaseModel], stop_note: str = "") -> BaseModel:
    """The arguments of ``call`` validated with ``model``.

    Every way the text can fail to become arguments (not JSON, not an object, nested too
    deeply to read, invalid for the schema) raises ``ToolError`` with what the model should
    do instead; nothing else escapes. ``stop_note`` says why the reply was cut, when it was.

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
        if "null" in text:  # only then can a null stand for a left-out optional argument
            data = _without_nulls(data, model)
        return model.model_validate(data)
    except ValidationError as exc:
        raise ToolError(f"invalid arguments for {call.name!r}: {_describe(exc)}") from None
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


def _without_nulls(data: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """Drop ``null`` for optional fields, in nested objects too, so their defaults apply.

    Strict-mode schemas make every optional argument required but nullable: the model sends
    ``null`` for what it means to leave out.
    """
    fields = {f.alias or name: f for name, f in model.model_fields.items()}
    fields.update(model.model_fields)
    cleaned: dict[str, Any] = {}
    for key, value in data.items():
        found = fields.get(key)
        if found is None:
            cleaned[key] = value
        elif value is not None or found.is_required():
            cleaned[key] = _nested_without_nulls(value, found)
    return cleaned


def _nested_without_nulls(value: Any, found: FieldInfo) -> Any:
    nested = _single_model(found.annotation)
    if nested is None:
        return value
    if isinstance(value, dict):
        return _without_nulls(value, nested)
    if isinstance(value, list):
        return [_without_nulls(v, nested) if isinstance(v, dict) else v for v in value]
    return value


def _single_model(annotation: Any) -> type[BaseModel] | None:
    """The one pydantic model in ``annotation`` (``M``, ``M | None``, ``list[M]``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (dict, Mapping):
        return None  # keys are data, not field names
    found = {m for arg in get_args(annotation) if (m := _single_model(arg)) is not None}
    return found.pop() if len(found) == 1 else None


def _describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error["loc"]) or "(arguments)"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)
