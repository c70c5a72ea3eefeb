"""Typed results: ``Agent.run(output_type=...)`` through the scripted provider."""

import asyncio
import dataclasses
import json

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

import neta
from neta.events import ToolCallStart
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from tests.core.runtime import kit

OUTPUT_TOOL = "final_result"  # the tool a model gives a typed answer with


class Weather(BaseModel):
    """The weather in a city."""

    city: str
    celsius: float = Field(ge=-90, le=60)


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Person(TypedDict):
    name: str
    age: int


def answer(**arguments):
    return {"tool_calls": [{"name": OUTPUT_TOOL, "arguments": arguments}]}


def agent_for(tmp_path, turns, **options):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    provider = ScriptedProvider(turns)
    agent = Agent(
        permissions="auto", provider=provider, plugin_manager=pm, workspace=tmp_path, **options
    )
    return agent, provider


def test_a_pydantic_output_given_through_the_output_tool_is_the_validated_result(tmp_path):
    agent, provider = agent_for(tmp_path, [answer(city="Oslo", celsius=3.5)])
    result = asyncio.run(agent.run("weather in Oslo?", output_type=Weather))
    assert result.outcome == "completed", result.reason
    assert result.output == Weather(city="Oslo", celsius=3.5)
    assert json.loads(result.text) == {"city": "Oslo", "celsius": 3.5}
    [request] = provider.received
    assert request.output is not None
    assert request.output.name == OUTPUT_TOOL
    assert request.output.schema["properties"]["city"] == {"title": "City", "type": "string"}
    assert request.tool_names[-1] == OUTPUT_TOOL  # offered beside the session's own tools
    assert "echo" in request.tool_names


def test_an_answer_written_as_json_text_is_validated_too(tmp_path):
    agent, _ = agent_for(tmp_path, [{"text": '```json\n{"x": 1, "y": 2}\n```'}])
    result = asyncio.run(agent.run("where?", output_type=Point))
    assert result.outcome == "completed", result.reason
    assert result.output == Point(x=1, y=2)


def test_a_typed_dict_output(tmp_path):
    agent, _ = agent_for(tmp_path, [answer(name="Ada", age=36)])
    result = asyncio.run(agent.run("who?", output_type=Person))
    assert result.output == {"name": "Ada", "age": 36}


def test_a_json_schema_output_is_checked_and_returned_as_a_dict(tmp_path):
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
    }
    agent, provider = agent_for(
        tmp_path,
        [answer(answer="six"), {**answer(answer=6), "expect": {"last_message_contains": "answer"}}],
    )
    result = asyncio.run(agent.run("6?", output_type=schema))
    assert result.outcome == "completed", result.reason
    assert result.output == {"answer": 6}
    assert provider.received[0].output.schema == schema


def test_tools_run_first_then_the_typed_answer_ends_the_run(tmp_path):
    agent, _ = agent_for(
        tmp_path,
        [
            {"tool_calls": [{"name": "echo", "arguments": {"text": "Oslo 3.5"}}]},
            answer(city="Oslo", celsius=3.5),
        ],
    )
    result = asyncio.run(agent.run("weather?", output_type=Weather))
    assert result.output == Weather(city="Oslo", celsius=3.5)
    assert result.turns == 2


def test_an_invalid_answer_is_sent_back_with_the_validation_error_then_a_valid_one_wins(tmp_path):
    agent, provider = agent_for(
        tmp_path, [answer(city="Oslo", celsius=300), answer(city="Oslo", celsius=3)]
    )
    result = asyncio.run(agent.run("weather?", output_type=Weather))
    assert result.outcome == "completed", result.reason
    assert result.output == Weather(city="Oslo", celsius=3)
    told = provider.received[1].messages[-1]
    assert told.role == "tool"
    assert told.is_error
    assert "celsius" in told.content
    assert "less than or equal to 60" in told.content


def test_invalid_text_is_answered_with_a_user_message_naming_the_problem(tmp_path):
    agent, provider = agent_for(tmp_path, [{"text": "It is sunny."}, answer(x=1, y=2)])
    result = asyncio.run(agent.run("where?", output_type=Point))
    assert result.output == Point(x=1, y=2)
    told = provider.received[1].messages[-1]
    assert told.role == "user"
    assert "not valid JSON" in told.content
    assert OUTPUT_TOOL in told.content


def test_after_the_retry_limit_the_run_raises_output_validation_error_with_the_last_answer(
    tmp_path,
):
    turns = [answer(city="Oslo", celsius=100 + n) for n in range(3)]
    agent, provider = agent_for(tmp_path, turns, limits=neta.RunLimits(output_retries=2))
    with pytest.raises(neta.OutputValidationError) as caught:
        asyncio.run(agent.run("weather?", output_type=Weather))
    error = caught.value
    assert json.loads(error.answer) == {"city": "Oslo", "celsius": 102}
    assert "celsius" in error.errors
    assert error.result.outcome == "error"
    assert error.result.output is None
    assert provider.remaining == 0  # tried three times: the answer and two retries
    assert "3 answers" in str(error)


def test_other_calls_of_the_reply_that_gives_the_answer_do_not_run(tmp_path):
    both = {
        "tool_calls": [
            {"name": "echo", "arguments": {"text": "late"}},
            {"name": OUTPUT_TOOL, "arguments": {"x": 1, "y": 2}},
        ]
    }
    agent, _ = agent_for(tmp_path, [both])
    result = asyncio.run(agent.run("where?", output_type=Point))
    assert result.output == Point(x=1, y=2)
    assert not [e for e in result.events if isinstance(e, ToolCallStart)]
    roles = [m.role for m in result.messages]
    assert roles == ["user", "assistant", "tool", "tool"]  # every call answered: a valid history
    assert "not run" in result.messages[2].content


def test_a_run_without_output_type_offers_no_output_tool(tmp_path):
    agent, provider = agent_for(tmp_path, [{"text": "plain"}])
    result = asyncio.run(agent.run("hi"))
    assert result.output is None
    assert provider.received[0].output is None
    assert OUTPUT_TOOL not in provider.received[0].tool_names


def test_an_output_type_that_is_not_an_object_is_a_config_error(tmp_path):
    agent, _ = agent_for(tmp_path, [{"text": "1"}])
    with pytest.raises(neta.ConfigError, match="object"):
        asyncio.run(agent.run("count", output_type=int))


def test_an_invalid_json_schema_is_a_config_error(tmp_path):
    agent, _ = agent_for(tmp_path, [{"text": "1"}])
    with pytest.raises(neta.ConfigError, match="schema"):
        asyncio.run(agent.run("count", output_type={"type": "object", "required": "x"}))


def test_a_session_goes_on_after_a_typed_run_gave_up(tmp_path):
    turns = [{"text": "no"}, {"text": "still no"}, {"text": "plain"}]
    agent, provider = agent_for(tmp_path, turns, limits=neta.RunLimits(output_retries=1))
    session = agent.new_session()
    with pytest.raises(neta.OutputValidationError):
        asyncio.run(agent.run("where?", session=session, output_type=Point))
    assert [m.role for m in session.history] == ["user", "assistant", "user", "assistant"]
    result = asyncio.run(agent.run("say anything", session=session))
    assert result.text == "plain"
    assert provider.received[-1].output is None
