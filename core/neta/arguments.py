"""Checking a tool call's arguments against the tool's schema: a pydantic model or a JSON Schema.

Both kinds accept ``null`` for an optional argument as "left out": strict-mode schemas make
every optional argument required but nullable, and the model sends ``null`` for what it means
to omit. Every refusal is a ``ToolError`` whose message the model can act on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from neta.errors import ToolError


def check_json_schema(schema: Mapping[str, Any]) -> str:
    """Why ``schema`` is not a valid JSON Schema; empty when it is.

    The draft is the one the schema's ``$schema`` names (2020-12 when it names none).
    """
    from jsonschema.exceptions import SchemaError  # imported on use: it is slow to import

    try:
        _validator_class(schema).check_schema(schema)
    except SchemaError as exc:
        return str(exc.message)
    return ""


def validate_with_json_schema(name: str, schema: Mapping[str, Any], data: dict[str, Any]) -> Any:
    """``data`` without its ``null`` optional values, once ``schema`` accepts it.

    Raises:
        ToolError: the arguments break the schema; the message names where and why.
    """
    from jsonschema.exceptions import best_match

    cleaned = _without_json_nulls(data, schema)
    validator = _validator_class(schema)(schema)
    error = best_match(validator.iter_errors(cleaned))
    if error is not None:
        where = ".".join(str(part) for part in error.absolute_path) or "(arguments)"
        raise ToolError(f"invalid arguments for {name!r}: {where}: {error.message}")
    return cleaned


def validate_with_model(name: str, model: type[BaseModel], data: dict[str, Any]) -> BaseModel:
    """An instance of ``model`` built from ``data`` (``null`` optional fields take defaults).

    Raises:
        ToolError: the arguments do not fit the model; the message lists every problem.
    """
    try:
        return model.model_validate(_without_nulls(data, model))
    except ValidationError as exc:
        raise ToolError(f"invalid arguments for {name!r}: {_describe(exc)}") from None


def _validator_class(schema: Mapping[str, Any]) -> Any:
    import jsonschema

    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)


def _without_json_nulls(data: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return data
    required = set(schema.get("required") or ())
    cleaned: dict[str, Any] = {}
    for key, value in data.items():
        if value is None and key in properties and key not in required:
            continue
        nested = properties.get(key)
        if isinstance(value, dict) and isinstance(nested, Mapping):
            value = _without_json_nulls(value, nested)
        cleaned[key] = value
    return cleaned


def _without_nulls(data: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """Drop ``null`` for optional fields, in nested objects too, so their defaults apply."""
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
