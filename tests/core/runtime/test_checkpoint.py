"""The run's one checkpoint: awaited before each model call and before a turn's tools run."""

import asyncio

import pytest

import neta
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from tests.core.runtime import kit


def agent_for(tmp_path, turns):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    provider = ScriptedProvider(turns)
    agent = Agent(permissions="auto", provider=provider, plugin_manager=pm, workspace=tmp_path)
    return agent, provider


ECHO_THEN_ANSWER = [
    {"tool_calls": [{"name": "echo", "arguments": {"text": "ping"}}]},
    {"text": "done"},
]


def test_the_checkpoint_sees_the_history_before_each_model_call_and_before_the_tools(tmp_path):
    agent, _ = agent_for(tmp_path, ECHO_THEN_ANSWER)
    session = agent.new_session()
    seen: list[list[str]] = []

    async def checkpoint() -> None:
        seen.append([message.role for message in session.history])

    session.checkpoint = checkpoint
    result = asyncio.run(agent.run("go", session=session))
    assert result.outcome == "completed", result.reason
    assert seen == [
        ["user"],  # before the first model call
        ["user", "assistant"],  # the reply with its call, before the call runs
        ["user", "assistant", "tool"],  # the tool's result, before the model reads it
    ]


class Refused(Exception):
    pass


@pytest.mark.parametrize("failing_at", [1, 2, 3])
def test_a_failing_checkpoint_stops_the_run_before_the_next_step_happens(tmp_path, failing_at):
    agent, provider = agent_for(tmp_path, ECHO_THEN_ANSWER)
    session = agent.new_session()
    calls = 0

    async def checkpoint() -> None:
        nonlocal calls
        calls += 1
        if calls == failing_at:
            raise Refused("the store cannot write")

    session.checkpoint = checkpoint
    kit.LOG.clear()
    with pytest.raises(Refused):
        asyncio.run(agent.run("go", session=session))
    asked = {1: 0, 2: 1, 3: 1}[failing_at]  # model calls made before the failing checkpoint
    assert provider.remaining == 2 - asked
    tool_messages = [m for m in session.history if m.role == "tool"]
    if failing_at == 2:  # the tool never ran: its call is closed as interrupted
        assert all(m.is_error for m in tool_messages)
    if failing_at == 3:
        assert [m.content for m in tool_messages] == ["echo: ping"]
