"""``Agent.stream``: a run's events read as they come, bounded, and cancelled with the reader."""

import asyncio

import pytest
from pydantic import BaseModel

import neta
from neta.events import RunFinished, RunStarted, TextDelta, ToolCallStart, ToolResultEvent
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from tests.core.runtime import kit

OUTPUT_TOOL = "final_result"  # the tool a model gives a typed answer with


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


def agent_for(tmp_path, turns):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    provider = ScriptedProvider(turns)
    agent = Agent(permissions="auto", provider=provider, plugin_manager=pm, workspace=tmp_path)
    return agent, provider


def test_a_stream_yields_the_runs_typed_events_then_has_its_result(tmp_path):
    agent, _ = agent_for(
        tmp_path, [{"tool_calls": [call("echo", text="ping")]}, {"text": "pong back"}]
    )

    async def read():
        async with agent.stream("go") as run:
            events = [event async for event in run]
        return run, events

    run, events = asyncio.run(read())
    assert isinstance(events[0], RunStarted)
    calls = [e for e in events if isinstance(e, ToolCallStart | ToolResultEvent)]
    assert [type(e) for e in calls] == [ToolCallStart, ToolResultEvent]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "pong back"
    assert isinstance(events[-1], RunFinished)
    assert run.result.outcome == "completed"
    assert run.result.text == "pong back"
    assert run.result.events == events


def test_a_stream_continues_a_given_session(tmp_path):
    agent, provider = agent_for(tmp_path, [{"text": "one"}, {"text": "two"}])
    session = agent.new_session()

    async def twice():
        for message in ("first", "second"):
            async with agent.stream(message, session=session) as run:
                async for _ in run:
                    pass
        return run.result

    result = asyncio.run(twice())
    assert result.text == "two"
    assert [m.content for m in session.history] == ["first", "one", "second", "two"]
    assert len(provider.received[1].messages) == 4  # system, first, one, second


def test_a_typed_stream_has_the_typed_output(tmp_path):
    class Point(BaseModel):
        x: int
        y: int

    agent, _ = agent_for(tmp_path, [{"tool_calls": [call(OUTPUT_TOOL, x=1, y=2)]}])

    async def read():
        async with agent.stream("where?", output_type=Point) as run:
            async for _ in run:
                pass
        return run.result

    assert asyncio.run(read()).output == Point(x=1, y=2)


def test_breaking_out_of_the_iteration_cancels_the_run_and_its_tools(tmp_path):
    kit.LOG.clear()
    agent, _ = agent_for(
        tmp_path, [{"tool_calls": [call("sleepy", seconds=30, label="long")]}, {"text": "never"}]
    )

    session = agent.new_session()

    async def read():
        async with agent.stream("go", session=session) as run:
            async for event in run:
                if isinstance(event, ToolCallStart):
                    while "start long" not in kit.LOG:
                        await asyncio.sleep(0.01)
                    break
        return run

    run = asyncio.run(read())
    assert kit.LOG == ["start long", "cancelled long"]
    assert session.history[-1].role == "tool"  # the call was closed as interrupted
    with pytest.raises(neta.ConfigError, match="cancelled"):
        _ = run.result


def test_cancelling_the_reading_task_cancels_the_run(tmp_path):
    kit.LOG.clear()
    agent, _ = agent_for(
        tmp_path, [{"tool_calls": [call("sleepy", seconds=30, label="long")]}, {"text": "never"}]
    )
    finished = []

    async def read():
        async with agent.stream("go") as run:
            async for event in run:
                if isinstance(event, RunFinished):
                    finished.append(event)

    async def main():
        reader = asyncio.ensure_future(read())
        while "start long" not in kit.LOG:
            await asyncio.sleep(0.01)
        reader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reader

    asyncio.run(main())
    assert kit.LOG == ["start long", "cancelled long"]
    assert finished == []  # the reader was gone before the run's end


def test_a_slow_reader_makes_the_run_wait_and_the_buffer_stays_bounded(tmp_path):
    words = " ".join(f"w{n}" for n in range(200))
    turns = [{"text": words, "tool_calls": [call("echo", text=str(n))]} for n in range(6)]
    agent, provider = agent_for(tmp_path, [*turns, {"text": "done"}])

    async def read():
        async with agent.stream("go", buffer=8) as run:
            first = await anext(run)
            await asyncio.sleep(0.2)  # a slow reader: the run cannot get far ahead
            asked_while_waiting = len(provider.received)
            longest = run.buffered
            events = [first] + [event async for event in run]
        return asked_while_waiting, longest, events, run.result

    asked, longest, events, result = asyncio.run(read())
    assert asked == 1  # the run waits for the reader before its next model call
    assert longest <= 8 + 4  # the bound, plus what one turn's calls emit past it
    assert result.outcome == "completed"
    assert len(events) < len(result.events)
    # text pieces that came while the buffer was full were joined, not dropped
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == words * 6 + "done"


def test_an_exception_of_the_run_is_raised_by_the_iteration_after_its_events(tmp_path):
    class Point(BaseModel):
        x: int

    agent, _ = agent_for(tmp_path, [{"text": "no"}, {"text": "no"}, {"text": "no"}])
    seen = []

    async def read():
        async with agent.stream("x?", output_type=Point) as run:
            async for event in run:
                seen.append(event)

    with pytest.raises(neta.OutputValidationError):
        asyncio.run(read())
    assert isinstance(seen[-1], RunFinished)
    assert seen[-1].outcome == "error"


def test_the_result_before_the_run_ended_is_a_config_error(tmp_path):
    agent, _ = agent_for(tmp_path, [{"text": "hi"}])

    async def early():
        async with agent.stream("go") as run:
            with pytest.raises(neta.ConfigError, match="not finished"):
                _ = run.result
            async for _ in run:
                pass
        return run.result.text

    assert asyncio.run(early()) == "hi"


def test_a_buffer_below_one_is_a_config_error(tmp_path):
    agent, _ = agent_for(tmp_path, [])
    with pytest.raises(neta.ConfigError, match="buffer"):
        agent.stream("go", buffer=0)


def test_a_slow_reader_paces_the_sub_agents_of_the_run_too(tmp_path):
    from tests.plugins.crew.crew_kit import Router, crew_agent, turn
    from tests.plugins.crew.crew_kit import call as crew_call

    kid = [turn(crew_call("list_dir", path="."), text=f"step {n}") for n in range(6)]
    router = Router(
        [turn(crew_call("delegate_task", goal="[kid] look")), {"text": "done"}],
        kid=[*kid, {"text": "looked"}],
    )
    agent = crew_agent(tmp_path, router, permissions="auto")

    async def read():
        most = 0
        async with agent.stream("go", buffer=4) as run:
            async for _ in run:
                await asyncio.sleep(0.01)
                most = max(most, run.buffered)
        return most, run.result

    most, result = asyncio.run(read())
    assert result.outcome == "completed", result.reason
    assert router.children["kid"].remaining == 0
    assert most <= 4 + 4  # the bound, plus what one of the child's replies emits past it
