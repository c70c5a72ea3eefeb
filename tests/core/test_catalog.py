import json
from collections.abc import Callable
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

import neta
import neta.catalog
import neta.errors


class ReadArgs(BaseModel):
    path: str = Field(description="File to read.")
    limit: int | None = None
    verbose: bool = False


def schema(name: str = "read", toolset: str = "files") -> neta.ToolSchema:
    return neta.ToolSchema(name=name, toolset=toolset, description="Read a file.", args=ReadArgs)


def test_catalog_registers_and_groups_schemas_by_toolset():
    catalog = neta.catalog.Catalog()
    catalog.register_schema(schema("read"), plugin="files")
    catalog.register_schema(schema("write"), plugin="files")
    catalog.register_schema(schema("run", toolset="shell"), plugin="shell")
    assert [s.name for s in catalog.schemas_by_toolset("files")] == ["read", "write"]
    assert catalog.tool_names(["shell", "files"]) == ["run", "read", "write"]
    assert catalog.tool_names(["missing"]) == []
    assert catalog.plugin_of("run") == "shell"
    assert len(catalog) == 3
    assert "read" in catalog


def test_catalog_same_name_from_two_plugins_raises_conflict_naming_both():
    catalog = neta.catalog.Catalog()
    catalog.register_schema(schema("read"), plugin="alpha")
    with pytest.raises(neta.errors.ToolConflictError) as caught:
        catalog.register_schema(schema("read"), plugin="beta")
    assert "'alpha'" in str(caught.value)
    assert "'beta'" in str(caught.value)
    assert caught.value.plugin == "beta"
    assert caught.value.first == "alpha"
    assert catalog.plugin_of("read") == "alpha"


@pytest.mark.parametrize("bad", ["", "has space", "dot.name", "x" * 65, "ünïcode"])
def test_tool_schema_rejects_names_outside_the_allowed_pattern(bad):
    with pytest.raises(ValidationError):
        schema(bad)


@pytest.mark.parametrize("good", ["a", "read_file", "list-dir", "X9", "x" * 64])
def test_tool_schema_accepts_names_inside_the_allowed_pattern(good):
    assert schema(good).name == good


def test_catalog_unknown_name_suggests_a_close_one():
    catalog = neta.catalog.Catalog()
    catalog.register_schema(schema("read_file"))
    with pytest.raises(neta.ConfigError, match="did you mean 'read_file'"):
        catalog.get("read_fille")


def test_openai_export_wraps_the_json_schema_as_a_function_tool():
    tool = schema().openai_tool()
    assert tool["type"] == "function"
    function = tool["function"]
    assert function["name"] == "read"
    assert function["description"] == "Read a file."
    assert function["parameters"]["required"] == ["path"]
    assert "strict" not in function


def test_openai_strict_export_requires_everything_and_makes_optionals_nullable():
    params = schema().openai_tool(strict=True)["function"]["parameters"]
    assert params["additionalProperties"] is False
    assert params["required"] == ["path", "limit", "verbose"]
    assert params["properties"]["path"]["type"] == "string"
    assert {"type": "null"} in params["properties"]["limit"]["anyOf"]
    assert params["properties"]["verbose"]["type"] == ["boolean", "null"]
    assert "default" not in params["properties"]["verbose"]


class Item(BaseModel):
    id: str
    note: str = ""


class Nested(BaseModel):
    items: list[Item]


def test_openai_strict_export_tightens_nested_models_too():
    params = neta.ToolSchema(name="n", toolset="t", description="d", args=Nested).parameters(
        strict=True
    )
    item = params["$defs"]["Item"]
    assert item["additionalProperties"] is False
    assert item["required"] == ["id", "note"]
    assert item["properties"]["note"]["type"] == ["string", "null"]


class Choice(BaseModel):
    question: str
    default: str = Field("yes", description="The answer when nobody replies.")
    mode: Literal["fast", "careful"] = "fast"


def test_openai_strict_export_keeps_an_argument_named_default():
    params = neta.ToolSchema(name="c", toolset="t", description="d", args=Choice).parameters(
        strict=True
    )
    assert set(params["properties"]) == {"question", "default", "mode"}
    assert params["required"] == ["question", "default", "mode"]
    assert params["properties"]["default"]["type"] == ["string", "null"]


def test_openai_strict_export_lets_an_optional_enum_be_null():
    mode = schema_for(Choice)["properties"]["mode"]
    assert {"type": "null"} in mode["anyOf"]
    assert {"enum": ["fast", "careful"], "type": "string"} in mode["anyOf"]


def schema_for(model):
    return neta.ToolSchema(name="c", toolset="t", description="d", args=model).parameters(
        strict=True
    )


class Opaque(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    hook: Callable[[], None] | None = None


def test_arguments_without_a_json_schema_are_refused_at_registration_naming_the_plugin():
    catalog = neta.catalog.Catalog()
    bad = neta.ToolSchema(name="opaque", toolset="t", description="d", args=Opaque)
    with pytest.raises(neta.PluginError, match="arguments have no JSON schema") as caught:
        catalog.register_schema(bad, plugin="gadgets")
    assert caught.value.plugin == "gadgets"
    assert "opaque" not in catalog


def test_a_model_is_turned_into_json_schema_once_and_each_caller_gets_its_own_copy(
    monkeypatch,
):
    # Every plugin manager registers every schema, and every request sends them: pydantic's
    # schema generation (~1 ms a model) was paid each time.
    class Greeting(BaseModel):
        name: str
        loud: bool = False

    made = []
    generate = Greeting.model_json_schema

    def counted(*args, **kwargs):
        made.append(args)
        return generate(*args, **kwargs)

    monkeypatch.setattr(Greeting, "model_json_schema", counted)
    for _ in range(3):
        catalog = neta.catalog.Catalog()
        schema = neta.ToolSchema(name="greet", toolset="t", description="Greet.", args=Greeting)
        catalog.register_schema(schema)
        first = schema.parameters()
        first["properties"]["name"]["type"] = "number"  # a caller's own copy
        strict = schema.openai_tool(strict=True)["function"]["parameters"]
        strict["required"].clear()
    assert len(made) == 1
    assert schema.parameters()["properties"]["name"]["type"] == "string"
    assert schema.openai_tool(strict=True)["function"]["parameters"]["required"] == ["name", "loud"]


class Quoted(BaseModel):
    """Arguments of ``quote``: see ``path``."""

    path: str = Field(description="The file, as ``read_file`` takes it; ``a``/``b`` both work.")
    mode: Literal["x", "y"] = Field(default="x", description="Plain text stays as it is.")


def test_rst_literals_reach_the_model_as_markdown_code():
    tool = neta.ToolSchema(
        name="quote",
        toolset="files",
        description="Quote ``path`` back.",
        args=Quoted,
        guidance="Use ``quote`` for files.",
        when_to_use="When a file must be quoted with ``quote``.",
    )
    assert tool.description == "Quote `path` back."
    # a span that holds a backtick has no single-backtick form: it is left as it is
    assert (
        neta.ToolSchema(
            name="q", toolset="files", description="Type ``a`b`` as is.", args=Quoted
        ).description
        == "Type ``a`b`` as is."
    )
    assert (tool.guidance, tool.when_to_use) == (
        "Use `quote` for files.",
        "When a file must be quoted with `quote`.",
    )
    for strict in (False, True):
        exported = tool.openai_tool(strict=strict)["function"]
        parameters = exported["parameters"]
        assert parameters["description"] == "Arguments of `quote`: see `path`."
        assert parameters["properties"]["path"]["description"] == (
            "The file, as `read_file` takes it; `a`/`b` both work."
        )
        assert parameters["properties"]["mode"]["description"] == "Plain text stays as it is."


def test_no_installed_tool_sends_the_model_rst_literals():
    catalog = neta.create_plugin_manager().catalog()
    assert len(catalog) > 10
    for tool in catalog:
        for strict in (False, True):
            sent = json.dumps(tool.openai_tool(strict=strict))
            assert "``" not in sent, f"{tool.name}: {sent}"
        assert "``" not in tool.guidance + tool.when_to_use, tool.name
