"""Tool schemas and the catalog that holds them (schemas only; instances are per session)."""

from __future__ import annotations

import copy
import re
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PydanticUserError,
    field_validator,
    model_validator,
)

from neta.arguments import check_json_schema, validate_with_json_schema, validate_with_model
from neta.errors import ConfigError, PluginError, ToolConflictError
from neta.permissions._modes import Effect
from neta.suggest import unknown_name_message

__all__ = ["TOOL_NAME_PATTERN", "Catalog", "ToolSchema", "as_markdown"]

TOOL_NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
"""What a tool name may be (the limit the OpenAI API puts on function names)."""

_RST_LITERAL = re.compile(r"``(?=[^\s`])([^`]+?)(?<=[^\s`])``")


def as_markdown(text: str) -> str:
    """``text`` with its reStructuredText literals made Markdown code spans.

    Docstrings write literals in double backticks; models and terminals read single ones.
    """
    return _RST_LITERAL.sub(r"`\1`", text)


# Keywords whose values are data, not schemas: never rewritten.
_DATA_KEYWORDS = frozenset({"default", "enum", "const", "examples"})
# Keywords whose values map names to schemas: each value is a schema, no key is a keyword.
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})


class ToolSchema(BaseModel):
    """What a tool is, independent of any session.

    The arguments are described either by a pydantic model (``args``; the tool receives an
    instance of it) or by a JSON Schema (``json_schema``, for tools whose arguments are only
    known at run time, such as an MCP server's; the tool receives the checked ``dict``).
    Exactly one of the two is given.

    Attributes:
        name: the name the model calls (``^[A-Za-z0-9_-]{1,64}$``).
        toolset: the toolset the tool belongs to.
        description: what the tool does, sent to the model with the schema.
        args: the pydantic model the arguments are validated with.
        json_schema: the JSON Schema the arguments are validated with (``jsonschema``).
        qualified_name: the name used instead when ``name`` is taken (e.g. prefixed with
            the server it comes from). Schemas that have one register after those that do
            not, so they are the ones that yield.
        guidance: a block for the system prompt on how to use the tool well.
        when_to_use: one line: the situation in which the model must use this tool.
        effect: what the tool does, for approvals (``neta.permissions``): ``reads`` (looks,
            changes nothing), ``writes`` (changes files of the workspace) or ``runs`` (runs a
            command or something outside Neta). ``None`` counts as ``runs``.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    toolset: str = Field(min_length=1)
    description: str = Field(min_length=1)
    args: type[BaseModel] | None = None
    json_schema: dict[str, Any] | None = None
    qualified_name: str = Field(default="", pattern=r"^$|" + TOOL_NAME_PATTERN)
    guidance: str = ""
    when_to_use: str = ""
    effect: Effect | None = None

    @field_validator("description", "guidance", "when_to_use")
    @classmethod
    def _markdown(cls, text: str) -> str:
        return as_markdown(text)

    @model_validator(mode="after")
    def _one_description(self) -> ToolSchema:
        if (self.args is None) == (self.json_schema is None):
            raise ValueError("give exactly one of args (a pydantic model) and json_schema")
        return self

    def parameters(self, *, strict: bool = False) -> dict[str, Any]:
        """The JSON schema of the arguments (strict: OpenAI strict-mode compatible)."""
        if self.json_schema is not None:  # _strict_schema works on a copy of its own
            return _strict_schema(self.json_schema) if strict else copy.deepcopy(self.json_schema)
        assert self.args is not None  # one of the two, checked at construction
        return copy.deepcopy(_model_schema(self.args, strict))

    def validate_arguments(self, data: dict[str, Any]) -> Any:
        """Check a call's decoded arguments: the ``args`` instance, or the checked ``dict``.

        ``null`` for an optional argument counts as leaving it out.

        Raises:
            ToolError: the arguments do not fit; the message says where and why.
        """
        if self.json_schema is not None:
            return validate_with_json_schema(self.name, self.json_schema, data)
        assert self.args is not None
        return validate_with_model(self.name, self.args, data)

    def openai_tool(self, *, strict: bool = False) -> dict[str, Any]:
        """The tool in the OpenAI Chat Completions ``tools`` format."""
        function: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters(strict=strict),
        }
        if strict:
            function["strict"] = True
        return {"type": "function", "function": function}


class Catalog:
    """Every registered tool schema, by name, remembering which plugin registered it."""

    def __init__(self) -> None:
        self._schemas: dict[str, ToolSchema] = {}
        self._plugins: dict[str, str] = {}
        self._renamed: dict[tuple[str, str], str] = {}

    def register_schema(self, schema: ToolSchema, *, plugin: str = "<host>") -> None:
        """Add ``schema``, registered by ``plugin``.

        A schema whose name is taken but which has a free ``qualified_name`` is registered
        under that name instead (see ``registered_name``).

        Raises:
            ToolConflictError: the name (and the qualified name, if any) is already registered.
            PluginError: the arguments have no JSON schema to offer a model.
        """
        if schema.name in self._schemas:
            fallback = schema.qualified_name
            if not fallback or fallback in self._schemas:
                first = self._plugins[schema.name]
                raise ToolConflictError(schema.name, first=first, second=plugin)
            self._renamed[(plugin, schema.name)] = fallback
            schema = schema.model_copy(update={"name": fallback})
        if schema.json_schema is not None:
            problem = check_json_schema(schema.json_schema)
            if problem:
                raise PluginError(plugin, f"tool {schema.name!r}: invalid JSON Schema ({problem})")
        try:
            schema.parameters(strict=True)
        except (PydanticUserError, TypeError, ValueError) as exc:
            raise PluginError(
                plugin, f"tool {schema.name!r}: its arguments have no JSON schema ({exc})"
            ) from exc
        self._schemas[schema.name] = schema
        self._plugins[schema.name] = plugin

    def get(self, name: str) -> ToolSchema:
        """The schema called ``name``; an unknown name raises ``ConfigError`` with suggestions."""
        try:
            return self._schemas[name]
        except KeyError:
            raise ConfigError(unknown_name_message("tool", name, self._schemas)) from None

    def registered_name(self, plugin: str, name: str) -> str:
        """The name ``plugin``'s tool ``name`` got: its qualified name if ``name`` was taken."""
        return self._renamed.get((plugin, name), name)

    def plugin_of(self, name: str) -> str:
        """The name of the plugin that registered tool ``name``."""
        self.get(name)
        return self._plugins[name]

    def schemas_by_toolset(self, toolset: str) -> list[ToolSchema]:
        """The schemas of one toolset, in registration order."""
        return [s for s in self._schemas.values() if s.toolset == toolset]

    def toolsets(self) -> list[str]:
        """Every toolset that has at least one schema, in registration order."""
        return list(dict.fromkeys(s.toolset for s in self._schemas.values()))

    def tool_names(self, toolsets: Iterable[str]) -> list[str]:
        """The names of the tools in ``toolsets``, toolset by toolset."""
        return [s.name for t in toolsets for s in self.schemas_by_toolset(t)]

    def openai_tools(self, names: Iterable[str], *, strict: bool = False) -> list[dict[str, Any]]:
        """The OpenAI ``tools`` list for the named tools."""
        return [self.get(n).openai_tool(strict=strict) for n in names]

    def __contains__(self, name: object) -> bool:
        return name in self._schemas

    def __iter__(self) -> Iterator[ToolSchema]:
        return iter(self._schemas.values())

    def __len__(self) -> int:
        return len(self._schemas)


_MODEL_SCHEMAS: weakref.WeakKeyDictionary[type[BaseModel], dict[bool, dict[str, Any]]] = (
    weakref.WeakKeyDictionary()
)


def _model_schema(args: type[BaseModel], strict: bool) -> dict[str, Any]:
    """The JSON schema of ``args``, made once per model (callers get copies of it).

    Each plugin manager registers every schema and each request sends them; generating a
    model's schema costs pydantic about a millisecond, copying it a twentieth of that. A
    model's schema is therefore fixed for the process once made: a model whose schema should
    change at run time is a new model (a tool with a schema known only at run time gives
    ``json_schema`` instead).
    """
    made = _MODEL_SCHEMAS.setdefault(args, {})
    if False not in made:  # docstrings and field descriptions are written for Python readers
        made[False] = _markdown_descriptions(args.model_json_schema())
    if strict and True not in made:
        made[True] = _strict_schema(made[False])
    return made[strict]


def _markdown_descriptions(node: Any, key: str = "") -> Any:
    """``node`` (a JSON schema or part of one) with every ``description`` made Markdown."""
    if key in _DATA_KEYWORDS:
        return node
    if isinstance(node, dict):
        if key in _SCHEMA_MAPS:
            return {name: _markdown_descriptions(value) for name, value in node.items()}
        return {
            name: as_markdown(value)
            if name == "description" and isinstance(value, str)
            else _markdown_descriptions(value, name)
            for name, value in node.items()
        }
    if isinstance(node, list):
        return [_markdown_descriptions(item) for item in node]
    return node


def _strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Rewrite a JSON schema for OpenAI strict mode.

    Every object gets ``additionalProperties: false`` and lists all its properties as required;
    a property that was optional becomes nullable instead, so the model can still omit a value
    by sending ``null``. Defaults are dropped (strict mode rejects them).
    """
    result = copy.deepcopy(schema)
    _tighten(result)
    return result


def _tighten(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _tighten(item)
        return
    if not isinstance(node, dict):
        return
    node.pop("default", None)
    properties = node.get("properties")
    if node.get("type") == "object" and isinstance(properties, dict):
        required = set(node.get("required", []))
        for prop_name, prop in properties.items():
            if prop_name not in required:
                properties[prop_name] = _nullable(prop)
        node["required"] = list(properties)
        node["additionalProperties"] = False
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            for subschema in value.values():  # a property may be called "default"
                _tighten(subschema)
        elif key not in _DATA_KEYWORDS:
            _tighten(value)


def _nullable(prop: dict[str, Any]) -> dict[str, Any]:
    variants = prop.get("anyOf")
    if isinstance(variants, list):
        if {"type": "null"} not in variants:
            variants.append({"type": "null"})
        return prop
    kind = prop.get("type")
    closed = "enum" in prop or "const" in prop  # null must be a variant, not just a type
    if isinstance(kind, str) and "$ref" not in prop and not closed:
        return {**prop, "type": [kind, "null"]}
    if isinstance(kind, list) and not closed:
        return prop if "null" in kind else {**prop, "type": [*kind, "null"]}
    extra: dict[str, Any] = {k: prop[k] for k in ("description", "title") if k in prop}
    inner = {k: v for k, v in prop.items() if k not in extra}
    return {"anyOf": [inner, {"type": "null"}], **extra}
