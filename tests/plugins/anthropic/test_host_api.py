"""What host apps use, through the real ``anthropic`` SDK and the fake API: typed results (a
final tool the model must call), streams, budgets and cache counts."""

import asyncio
import json

import pytest
from typing_extensions import TypedDict

import neta
from neta.events import RunFinished, TextDelta, ToolCallStart
from neta_anthropic import plugin
from tests.core.runtime import kit
from tests.fake_anthropic import FakeAnthropic, Reply

OUTPUT_TOOL = "final_result"


class Weather(TypedDict):
    city: str
    celsius: float


def kit_agent(server, tmp_path, *, stream=True, **options):
    pm = neta.create_plugin_manager(
        load_entrypoints=False, plugins=[("anthropic", plugin), ("kit", kit)]
    )
    return neta.Agent(
        permissions="auto",
        model="anthropic:claude-test",
        plugin_manager=pm,
        workspace=tmp_path,
        provider_options={"base_url": server.base_url, "api_key": "sk-ant-test", "stream": stream},
        **options,
    )


@pytest.mark.parametrize("stream", [True, False])
def test_typed_output_comes_through_a_final_tool_the_model_must_call(tmp_path, stream):
    replies = [
        Reply(tool_calls=[("echo", '{"text": "Oslo"}')]),
        Reply(tool_calls=[(OUTPUT_TOOL, '{"city": "Oslo", "celsius": 3.5}')]),
    ]
    with FakeAnthropic(replies) as server:
        agent = kit_agent(server, tmp_path, stream=stream)
        result = asyncio.run(agent.run("weather?", output_type=Weather))
    assert result.outcome == "completed", result.reason
    assert result.output == {"city": "Oslo", "celsius": 3.5}
    assert server.rejected == []
    for body in server.requests:
        assert body["tool_choice"] == {"type": "any"}
        final = body["tools"][-1]
        assert final["name"] == OUTPUT_TOOL
        assert final["input_schema"]["properties"]["celsius"] == {
            "title": "Celsius",
            "type": "number",
        }
    # the answer is recorded as the final tool's result: a history the API accepts next time
    assert [m.role for m in result.messages][-2:] == ["assistant", "tool"]


def test_an_invalid_final_tool_call_is_answered_with_the_error_then_retried(tmp_path):
    replies = [
        Reply(tool_calls=[(OUTPUT_TOOL, '{"city": "Oslo"}')]),
        Reply(tool_calls=[(OUTPUT_TOOL, '{"city": "Oslo", "celsius": 1}')]),
    ]
    with FakeAnthropic(replies) as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("weather?", output_type=Weather))
    assert result.output == {"city": "Oslo", "celsius": 1}
    [error] = [
        block
        for block in server.requests[1]["messages"][-1]["content"]
        if block["type"] == "tool_result"
    ]
    assert error["is_error"] is True
    assert "celsius" in error["content"]
    assert server.rejected == []


def test_a_run_without_output_type_leaves_the_tool_choice_to_the_model(tmp_path):
    with FakeAnthropic([Reply(text="hello")]) as server:
        asyncio.run(kit_agent(server, tmp_path).run("hi"))
    assert "tool_choice" not in server.requests[0]
    assert OUTPUT_TOOL not in [t["name"] for t in server.requests[0]["tools"]]


def test_a_streamed_run_through_the_sdk(tmp_path):
    replies = [Reply(tool_calls=[("echo", '{"text": "hi"}')]), Reply(text="one two")]
    with FakeAnthropic(replies) as server:
        agent = kit_agent(server, tmp_path)

        async def read():
            async with agent.stream("go") as run:
                events = [event async for event in run]
            return events, run.result

        events, result = asyncio.run(read())
    assert [e.name for e in events if isinstance(e, ToolCallStart)] == ["echo"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "one two"
    assert isinstance(events[-1], RunFinished)
    assert result.text == "one two"


def test_a_budget_through_the_sdk_counts_cache_reads_and_writes_as_input(tmp_path):
    calls = [
        Reply(tool_calls=[("echo", json.dumps({"text": str(n)}))], usage=(10, 5, 300, 100))
        for n in range(4)
    ]
    with FakeAnthropic(calls) as server:
        agent = kit_agent(server, tmp_path)
        result = asyncio.run(agent.run("go", usage_limits=neta.UsageLimits(input_tokens=800)))
    assert (result.outcome, result.limit) == ("limit", "input_tokens")
    assert len(server.requests) == 2
    assert result.usage == neta.Usage(
        input_tokens=820, output_tokens=10, cache_read_tokens=600, cache_creation_tokens=200
    )
