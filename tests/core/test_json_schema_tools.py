"""Tools whose arguments a JSON Schema describes, beside pydantic-described ones."""

import asyncio
import json

import pytest
from pydantic import BaseModel, ValidationError

import neta
import neta.catalog
from neta.events import ToolResultEvent
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
        "units": {"type": "string", "enum": ["metric", "imperial"]},
    },
    "required": ["city"],
}


def weather_schema(**overrides):
    fields = {
        "name": "forecast",
        "toolset": "weather",
        "description": "Forecast the weather.",
        "json_schema": WEATHER,
    }
    return neta.ToolSchema(**(fields | overrides))


class WeatherPlugin:
    """A plugin whose one tool is described by a JSON Schema, not a pydantic model."""

    def __init__(self):
        self.seen = []

    @neta.hookimpl
    def neta_toolsets(self):
        return [neta.ToolsetSpec(name="weather", description="Weather.")]

    @neta.hookimpl
    def neta_tools(self):
        return [weather_schema()]

    @neta.hookimpl
    def neta_build_tools(self, session):
        def forecast(args):
            self.seen.append(args)
            return f"sunny in {args['city']} for {args.get('days', 1)} day(s)"

        return [neta.Tool(name="forecast", execute=forecast)]


def test_json_schema_tool_offers_its_schema_as_the_parameters():
    schema = weather_schema()
    assert schema.parameters() == WEATHER
    tool = schema.openai_tool()
    assert tool["function"]["parameters"] == WEATHER
    strict = schema.parameters(strict=True)
    assert strict["additionalProperties"] is False
    assert strict["properties"]["days"]["type"] == ["integer", "null"]
    assert WEATHER["properties"]["days"]["type"] == "integer"  # the original is untouched


def test_tool_schema_needs_exactly_one_way_to_describe_arguments():
    with pytest.raises(ValidationError, match="exactly one"):
        neta.ToolSchema(name="x", toolset="t", description="d")
    with pytest.raises(ValidationError, match="exactly one"):
        weather_schema(args=BaseModel)


def test_catalog_refuses_a_json_schema_that_is_not_a_valid_schema():
    catalog = neta.catalog.Catalog()
    broken = weather_schema(json_schema={"type": "object", "properties": {"x": {"type": 7}}})
    with pytest.raises(neta.PluginError, match="forecast"):
        catalog.register_schema(broken, plugin="weather")
    assert "forecast" not in catalog


def test_validate_arguments_returns_the_checked_dict_for_a_json_schema_tool():
    schema = weather_schema()
    assert schema.validate_arguments({"city": "Oslo", "days": 3}) == {"city": "Oslo", "days": 3}


def test_validate_arguments_drops_null_for_an_optional_property():
    schema = weather_schema()
    assert schema.validate_arguments({"city": "Oslo", "days": None, "units": None}) == {
        "city": "Oslo"
    }


@pytest.mark.parametrize(
    ("arguments", "where"),
    [
        ({}, "'city' is a required property"),
        ({"city": "Oslo", "days": 30}, "days"),
        ({"city": "Oslo", "units": "kelvin"}, "units"),
        ({"city": None}, "city"),
    ],
)
def test_validate_arguments_refuses_what_the_json_schema_refuses(arguments, where):
    with pytest.raises(neta.ToolError, match="invalid arguments for 'forecast'") as caught:
        weather_schema().validate_arguments(arguments)
    assert where in str(caught.value)


def test_validate_arguments_of_a_pydantic_tool_returns_the_model():
    class Args(BaseModel):
        n: int

    schema = neta.ToolSchema(name="p", toolset="t", description="d", args=Args)
    assert schema.validate_arguments({"n": 2}) == Args(n=2)
    with pytest.raises(neta.ToolError, match="invalid arguments for 'p': n"):
        schema.validate_arguments({"n": "two"})


def run_with(tmp_path, arguments):
    plugin = WeatherPlugin()
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("weather", plugin)])
    turns = [
        {"tool_calls": [{"name": "forecast", "arguments": arguments}]},
        {"text": "done"},
    ]
    agent = Agent(
        permissions="auto", provider=ScriptedProvider(turns), plugin_manager=pm, workspace=tmp_path
    )
    result = asyncio.run(agent.run("weather?"))
    [event] = [e for e in result.events if isinstance(e, ToolResultEvent)]
    return plugin, event


def test_runtime_validates_a_json_schema_tool_call_before_running_it(tmp_path):
    plugin, event = run_with(tmp_path, {"city": "Bergen", "days": 2})
    assert not event.is_error
    assert event.content == "sunny in Bergen for 2 day(s)"
    assert plugin.seen == [{"city": "Bergen", "days": 2}]


def test_runtime_turns_invalid_json_schema_arguments_into_an_error_the_model_reads(tmp_path):
    plugin, event = run_with(tmp_path, {"city": "Bergen", "days": 99})
    assert event.is_error
    assert "invalid arguments for 'forecast'" in event.content
    assert "days" in event.content
    assert plugin.seen == []


def test_tools_call_validates_json_schema_arguments(tmp_path, plugin_dir):
    plugin_dir.add(
        "neta-tools-weather",
        "weather_tool",
        f"""
        import neta

        @neta.hookimpl
        def neta_toolsets():
            return [neta.ToolsetSpec(name="weather", description="Weather.")]

        @neta.hookimpl
        def neta_tools():
            return [neta.ToolSchema(name="forecast", toolset="weather",
                                    description="Forecast.", json_schema={json.dumps(WEATHER)})]

        @neta.hookimpl
        def neta_build_tools(session):
            return [neta.Tool(name="forecast", execute=lambda a: "sunny in " + a["city"])]
        """,
    )
    good = plugin_dir.neta("tools", "call", "forecast", "--args", '{"city": "Rome"}')
    assert good.returncode == 0, good.stderr
    assert good.stdout.strip() == "sunny in Rome"
    bad = plugin_dir.neta("tools", "call", "forecast", "--args", '{"city": "Rome", "days": 0}')
    assert bad.returncode == 2
    assert "invalid arguments for 'forecast'" in bad.stderr
    shown = plugin_dir.neta("tools", "show", "forecast")
    assert '"minimum": 1' in shown.stdout
