"""Budgets: ``UsageLimits`` per run and per session, checked before each model call."""

import asyncio

import pytest

import neta
from neta.events import RunFinished, ToolResultEvent
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from tests.core.runtime import kit
from tests.plugins.crew.crew_kit import Router, crew_agent, turn
from tests.plugins.crew.crew_kit import call as crew_call


def usage(tokens_in, tokens_out):
    return {"input_tokens": tokens_in, "output_tokens": tokens_out}


def echo_turn(n, tokens_in=100, tokens_out=10):
    return {
        "tool_calls": [{"name": "echo", "arguments": {"text": str(n)}}],
        "usage": usage(tokens_in, tokens_out),
    }


def agent_for(tmp_path, turns, **options):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    provider = ScriptedProvider(turns)
    agent = Agent(
        permissions="auto", provider=provider, plugin_manager=pm, workspace=tmp_path, **options
    )
    return agent, provider


@pytest.mark.parametrize(
    ("limits", "name", "calls"),
    [
        # each reply: 100 tokens in, 10 out, one tool call; a cap stops the run once passed
        ({"input_tokens": 250}, "input_tokens", 3),
        ({"output_tokens": 20}, "output_tokens", 3),
        ({"total_tokens": 330}, "total_tokens", 4),
        ({"model_calls": 4}, "model_calls", 4),
        ({"tool_calls": 2}, "tool_calls", 3),
    ],
)
def test_a_run_that_passes_a_limit_ends_with_outcome_limit_naming_it(tmp_path, limits, name, calls):
    agent, provider = agent_for(tmp_path, [echo_turn(n) for n in range(10)])
    result = asyncio.run(agent.run("go", usage_limits=neta.UsageLimits(**limits)))
    assert result.outcome == "limit"
    assert result.limit == name
    assert name in result.reason
    assert "the run" in result.reason
    assert len(provider.received) == calls  # checked before each model call: none past it
    ran = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert len(ran) == (calls if name == "model_calls" else calls - 1)  # the last reply's did not
    assert result.messages[-1].role == "tool"  # every call answered: the history stays valid
    assert result.events[-1] == RunFinished(
        session_id=result.session_id,
        outcome="limit",
        reason=result.reason,
        turns=calls,
    )


def test_a_tiny_wall_time_ends_the_run_with_outcome_limit(tmp_path):
    slow = {"tool_calls": [{"name": "sleepy", "arguments": {"seconds": 0.05}}]}
    agent, _ = agent_for(tmp_path, [slow, slow, {"text": "done"}])
    result = asyncio.run(agent.run("go", usage_limits=neta.UsageLimits(wall_time=0.01)))
    assert (result.outcome, result.limit) == ("limit", "wall_time")
    assert "wall_time" in result.reason


def test_the_agents_limits_hold_for_every_run_and_a_runs_own_replace_them(tmp_path):
    agent, _ = agent_for(
        tmp_path,
        [echo_turn(n) for n in range(6)],
        usage_limits=neta.UsageLimits(model_calls=1),
    )
    session = agent.new_session()
    first = asyncio.run(agent.run("go", session=session))
    assert (first.outcome, first.turns) == ("limit", 1)
    second = asyncio.run(
        agent.run("go on", session=session, usage_limits=neta.UsageLimits(model_calls=3))
    )
    assert (second.outcome, second.turns) == ("limit", 3)  # counted from this run's start


def test_a_sessions_limits_hold_over_all_its_runs(tmp_path):
    agent, provider = agent_for(
        tmp_path,
        [{"text": "a", "usage": usage(100, 10)}, {"text": "b", "usage": usage(100, 10)}],
    )
    session = agent.new_session(usage_limits=neta.UsageLimits(total_tokens=200))
    assert asyncio.run(agent.run("one", session=session)).outcome == "completed"
    assert asyncio.run(agent.run("two", session=session)).outcome == "completed"
    third = asyncio.run(agent.run("three", session=session))
    assert (third.outcome, third.limit) == ("limit", "total_tokens")
    assert "the session" in third.reason
    assert third.turns == 0
    assert len(provider.received) == 2


def test_a_run_within_its_limits_completes(tmp_path):
    agent, _ = agent_for(tmp_path, [echo_turn(1), {"text": "done", "usage": usage(10, 1)}])
    limits = neta.UsageLimits(
        input_tokens=1000,
        output_tokens=100,
        total_tokens=1100,
        model_calls=2,
        tool_calls=1,
        wall_time=600,
    )
    result = asyncio.run(agent.run("go", usage_limits=limits))
    assert result.outcome == "completed", result.reason
    assert result.limit == ""


def test_sub_agents_count_toward_their_parents_budget_and_stop_at_it(tmp_path):
    router = Router(
        [
            turn(crew_call("delegate_task", goal="[kid] dig"), usage=usage(10, 1)),
            {"text": "never asked", "usage": usage(10, 1)},
        ],
        kid=[
            turn(crew_call("list_dir", path="."), usage=usage(100, 10)),
            turn(crew_call("list_dir", path="."), usage=usage(100, 10)),
            {"text": "never asked either"},
        ],
    )
    agent = crew_agent(tmp_path, router, permissions="auto")
    session = agent.new_session()
    result = asyncio.run(
        agent.run("go", session=session, usage_limits=neta.UsageLimits(total_tokens=150))
    )
    assert (result.outcome, result.limit) == ("limit", "total_tokens")
    assert router.children["kid"].remaining == 1  # the child stopped at its parent's budget
    assert router.parent.remaining == 1
    kid_end = next(
        e for e in result.events if isinstance(e, RunFinished) and e.agent_id is not None
    )
    assert kid_end.outcome == "limit"
    assert "delegating" in kid_end.reason
    assert result.sub_agent_calls == 2
    assert session.meter.sub_agent_usage.total_tokens == 220


def test_a_sub_agents_tool_calls_count_toward_the_parents_tool_call_limit(tmp_path):
    router = Router(
        [turn(crew_call("delegate_task", goal="[kid] dig")), {"text": "never asked"}],
        kid=[
            turn(crew_call("list_dir", path="."), crew_call("list_dir", path=".")),
            turn(crew_call("list_dir", path=".")),  # the fourth call: past the limit of 3
            {"text": "x"},
        ],
    )
    agent = crew_agent(tmp_path, router, permissions="auto")
    result = asyncio.run(agent.run("go", usage_limits=neta.UsageLimits(tool_calls=3)))
    assert (result.outcome, result.limit) == ("limit", "tool_calls")
    assert router.children["kid"].remaining == 1
    assert router.parent.remaining == 1


def test_limits_below_zero_are_a_config_error():
    with pytest.raises(neta.ConfigError, match="total_tokens"):
        neta.UsageLimits(total_tokens=-1)
