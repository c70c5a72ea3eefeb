"""What host apps use, through the real ``openai`` SDK and the fake server: typed results,
streams, budgets and cache reads."""

import asyncio
import json

import pytest
from pydantic import BaseModel

import neta
from neta.events import RunFinished, TextDelta, ToolCallStart
from neta.runtime.agent import Agent
from tests.core.runtime import kit
from tests.fake_openai import FakeOpenAI, Reply

OUTPUT_TOOL = "final_result"  # the tool a model gives a typed answer with


class Weather(BaseModel):
    city: str
    celsius: float


def kit_agent(server, tmp_path, *, stream=True, **options):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    return Agent(
        permissions="auto",
        provider="openai",
        model="fake-model",
        plugin_manager=pm,
        workspace=tmp_path,
        provider_options={"base_url": server.base_url, "api_key": "sk-test", "stream": stream},
        **options,
    )


@pytest.mark.parametrize("stream", [True, False])
def test_typed_output_asks_for_the_json_schema_natively(tmp_path, stream):
    replies = [
        Reply(tool_calls=[("echo", '{"text": "Oslo"}')]),
        Reply(text='{"city": "Oslo", "celsius": 3.5}'),
    ]
    with FakeOpenAI(replies) as server:
        agent = kit_agent(server, tmp_path, stream=stream)
        result = asyncio.run(agent.run("weather?", output_type=Weather))
    assert result.outcome == "completed", result.reason
    assert result.output == Weather(city="Oslo", celsius=3.5)
    assert server.rejected == []
    for body in server.requests:
        response_format = body["response_format"]
        assert response_format["type"] == "json_schema"
        assert response_format["json_schema"]["name"] == OUTPUT_TOOL
        assert response_format["json_schema"]["schema"] == Weather.model_json_schema()
        # the schema goes natively: the output tool is not offered as well
        assert OUTPUT_TOOL not in [t["function"]["name"] for t in body["tools"]]
        assert "echo" in [t["function"]["name"] for t in body["tools"]]


def test_an_invalid_native_answer_is_sent_back_then_the_valid_one_is_the_output(tmp_path):
    replies = [Reply(text='{"city": "Oslo"}'), Reply(text='{"city": "Oslo", "celsius": 2}')]
    with FakeOpenAI(replies) as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("weather?", output_type=Weather))
    assert result.output == Weather(city="Oslo", celsius=2)
    told = server.requests[1]["messages"][-1]
    assert told["role"] == "user"
    assert "celsius" in told["content"]
    assert "Field required" in told["content"]


def test_invalid_answers_past_the_retry_limit_raise_output_validation_error(tmp_path):
    replies = [Reply(text="sunny"), Reply(text="still sunny")]
    with FakeOpenAI(replies) as server:
        agent = kit_agent(server, tmp_path, limits=neta.RunLimits(output_retries=1))
        with pytest.raises(neta.OutputValidationError) as caught:
            asyncio.run(agent.run("weather?", output_type=Weather))
    assert caught.value.answer == "still sunny"
    assert caught.value.result.usage.input_tokens == 20


def test_a_streamed_run_through_the_sdk_yields_text_as_it_comes(tmp_path):
    replies = [Reply(tool_calls=[("echo", '{"text": "hi"}')]), Reply(text="one two three")]
    with FakeOpenAI(replies) as server:
        agent = kit_agent(server, tmp_path)

        async def read():
            async with agent.stream("go") as run:
                events = [event async for event in run]
            return events, run.result

        events, result = asyncio.run(read())
    assert [e.name for e in events if isinstance(e, ToolCallStart)] == ["echo"]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["one ", "two ", "three"]
    assert isinstance(events[-1], RunFinished)
    assert result.text == "one two three"


def test_a_budget_through_the_sdk_stops_before_the_model_call_past_it(tmp_path):
    replies = [
        Reply(tool_calls=[("echo", f'{{"text": "{n}"}}')], usage=(100, 10)) for n in range(5)
    ]
    with FakeOpenAI(replies) as server:
        agent = kit_agent(server, tmp_path)
        result = asyncio.run(agent.run("go", usage_limits=neta.UsageLimits(input_tokens=150)))
    assert (result.outcome, result.limit) == ("limit", "input_tokens")
    assert len(server.requests) == 2


@pytest.mark.parametrize("stream", [True, False])
def test_cached_prompt_tokens_are_reported_as_cache_reads(tmp_path, stream):
    with FakeOpenAI([Reply(text="ok", usage=(1200, 20), cached=1024)]) as server:
        result = asyncio.run(kit_agent(server, tmp_path, stream=stream).run("go"))
    assert result.usage == neta.Usage(input_tokens=1200, output_tokens=20, cache_read_tokens=1024)
    assert json.dumps(server.requests[0]).count("response_format") == 0
