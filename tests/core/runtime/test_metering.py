"""What a run's model calls cost: its own, and its sub-agents' apart, however they ended."""

import asyncio

from neta.messages import Usage
from tests.plugins.crew.crew_kit import Router, call, crew_agent, turn, wait_log

CREW = ["base", "crew"]  # a child that may delegate in turn


def usage(tokens_in, tokens_out):
    return {"input_tokens": tokens_in, "output_tokens": tokens_out}


def test_a_result_counts_its_sub_agents_calls_and_tokens_apart_grandchildren_included(tmp_path):
    router = Router(
        [
            turn(call("delegate_task", goal="[kid] look", toolsets=CREW), usage=usage(10, 1)),
            {"text": "All done.", "usage": usage(10, 1)},
        ],
        kid=[
            turn(call("delegate_task", goal="[grandkid] dig"), usage=usage(100, 10)),
            {"text": "Looked.", "usage": usage(100, 10)},
        ],
        grandkid=[{"text": "Dug.", "usage": usage(1000, 100)}],
    )
    agent = crew_agent(tmp_path, router, crew_depth=2)
    session = agent.new_session()
    result = asyncio.run(agent.run("go", session=session))
    assert result.outcome == "completed", result.reason
    assert result.usage == Usage(input_tokens=20, output_tokens=2)
    assert result.sub_agent_calls == 3
    assert result.sub_agent_usage == Usage(input_tokens=1200, output_tokens=120)
    assert result.total_usage == Usage(input_tokens=1220, output_tokens=122)
    assert session.meter.calls == 2

    router.parent = type(router.parent)([{"text": "Nothing to delegate.", "usage": usage(5, 1)}])
    again = asyncio.run(agent.run("and now?", session=session))
    assert (again.usage, again.sub_agent_calls) == (Usage(input_tokens=5, output_tokens=1), 0)


def test_what_a_child_spent_counts_when_the_parents_run_is_cancelled_during_it(tmp_path):
    router = Router(
        [turn(call("delegate_task", goal="[kid] wait", toolsets=["slow"]), usage=usage(10, 1))],
        kid=[
            turn(call("wait", seconds=60, label="kid"), usage=usage(100, 10)),
            {"text": "never"},
        ],
    )
    agent = crew_agent(tmp_path, router, toolsets=["slow"], permissions="auto")
    session = agent.new_session()

    async def cancelled_during_the_child():
        run = asyncio.ensure_future(agent.run("go", session=session))
        while "start kid" not in wait_log:
            await asyncio.sleep(0.01)
        run.cancel()
        await asyncio.gather(run, return_exceptions=True)

    asyncio.run(cancelled_during_the_child())
    assert "cancelled kid" in wait_log
    assert (session.meter.calls, session.meter.usage) == (
        1,
        Usage(input_tokens=10, output_tokens=1),
    )
    assert session.meter.sub_agent_calls == 1
    assert session.meter.sub_agent_usage == Usage(input_tokens=100, output_tokens=10)
