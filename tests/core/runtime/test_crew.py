"""The crew runner: children built by the same agent, run, judged and reported to the parent."""

import asyncio
import re

import pytest

import neta
import neta.crew
import neta_planning.plugin
from neta.runtime.agent import Agent
from neta.runtime.crew import CrewRunner
from tests.core.runtime import kit
from tests.plugins.crew.crew_kit import Router, SlowPlugin, call, ended_sessions, turn


class ChildOnly:
    """A toolset only crew children get (it requires the ``crew_parent`` capability)."""

    @neta.hookimpl
    def neta_toolsets(self):
        return [neta.ToolsetSpec(name="childish", requires=neta.crew.CREW_PARENT)]

    @neta.hookimpl
    def neta_tools(self):
        return [
            neta.ToolSchema(name="hop", toolset="childish", description="Hop.", args=kit.NoArgs)
        ]

    @neta.hookimpl
    def neta_build_tools(self, session):
        return [neta.Tool(name="hop", execute=lambda args: "hopped")]


class StartSpy:
    """Records every session that starts."""

    def __init__(self):
        self.started = []

    @neta.hookimpl
    def neta_session_start(self, session):
        self.started.append(session)


def agent_for(tmp_path, router, **options):
    ended_sessions.clear()
    kit.LOG.clear()
    pm = neta.create_plugin_manager(
        load_entrypoints=False,
        plugins=[
            ("kit", kit),
            ("planning", neta_planning.plugin),
            ("childish", ChildOnly()),
            ("slow", SlowPlugin()),
        ],
    )
    return Agent(provider=router, plugin_manager=pm, workspace=tmp_path, **options)


def run_child(agent, goal, parent=None, **kwargs):
    parent = parent or agent.new_session()
    return asyncio.run(parent.context.crew_runner.run_child(goal, **kwargs))


# -- which sessions get a runner ----------------------------------------------------------------


def test_new_session_at_top_level_gets_a_runner_bound_to_it(tmp_path):
    agent = agent_for(tmp_path, Router([]))
    session = agent.new_session()
    runner = session.context.crew_runner
    assert isinstance(runner, CrewRunner)
    assert isinstance(runner, neta.SubAgentRunner)
    assert runner.parent is session
    assert runner.timeout == 600
    assert "crew_runner" in session.context.capabilities


def test_new_session_at_the_depth_limit_gets_no_runner(tmp_path):
    agent = agent_for(tmp_path, Router([]))
    assert agent.new_session(depth=1).context.crew_runner is None
    assert agent_for(tmp_path, Router([]), crew_depth=0).new_session().context.crew_runner is None
    deeper = agent_for(tmp_path, Router([]), crew_depth=2)
    assert deeper.new_session(depth=1, entry="crew").context.crew_runner is not None
    assert deeper.new_session(depth=2, entry="crew").context.crew_runner is None


def test_new_session_keeps_the_runner_a_host_passes_including_none(tmp_path):
    agent = agent_for(tmp_path, Router([]))
    own = object()
    assert agent.new_session(crew_runner=own).context.crew_runner is own
    assert agent.new_session(crew_runner=None).context.crew_runner is None


def test_crew_runner_with_no_slot_or_no_time_is_a_config_error(tmp_path):
    with pytest.raises(neta.ConfigError, match="concurrency"):
        agent_for(tmp_path, Router([]), crew_concurrency=0).new_session()
    with pytest.raises(neta.ConfigError, match="timeout"):
        agent_for(tmp_path, Router([]), crew_timeout=0).new_session()


# -- what a child gets --------------------------------------------------------------------------


def test_child_toolsets_are_the_requested_ones_the_parent_has_plus_the_child_only_ones(tmp_path):
    agent = agent_for(tmp_path, Router([]))
    runner = agent.new_session().context.crew_runner
    assert runner.child_toolsets() == ("planning", "childish")
    assert runner.child_toolsets(["kit", "slow", "nonexistent"]) == ("kit", "childish")
    requested_slow = agent_for(tmp_path, Router([]), toolsets=["slow"]).new_session()
    assert requested_slow.context.crew_runner.child_toolsets(["slow"]) == ("slow", "childish")


def test_child_runs_in_its_own_session_in_the_parents_workspace(tmp_path):
    expect = {"tools_include": ["echo", "hop"], "last_message_contains": "Context from"}
    router = Router(
        [],
        a=[
            turn(call("echo", text="hi"), expect=expect),
            {"text": "Echoed hi.", "expect": {"last_message_contains": "echo: hi"}},
        ],
    )
    agent = agent_for(tmp_path, router, permissions="auto")
    parent = agent.new_session(extras={"user_scope": "ann"})
    spy = StartSpy()
    agent.pm.register(spy)
    result = run_child(
        agent, "[a] echo hi", parent, context="the user likes brevity", toolsets=["kit", "planning"]
    )
    [child] = spy.started
    assert result.status == "completed", result.reason
    assert result.summary == "Echoed hi."
    assert result.child_id == child.session_id != parent.session_id
    assert result.toolsets == ("planning", "kit")  # display order
    assert child.entry == "crew"
    assert child.depth == 1
    assert child.workspace == parent.context.workspace
    assert child.user_channel is False
    assert child.todo_store is not None
    assert child.todo_store is not parent.context.todo_store
    assert child.extras == {"user_scope": "ann", neta.crew.CREW_PARENT: parent.session_id}
    assert parent.history == []
    assert ended_sessions == [child.session_id]


def test_child_is_told_its_goal_and_context_and_that_it_reports_back(tmp_path):
    router = Router([], a=[{"text": "ok"}])
    agent = agent_for(tmp_path, router)
    run_child(agent, "[a] count the files", context="only under src/")
    [request] = router.children["a"].received
    task = request.messages[-1].content
    assert task.startswith("Your task: [a] count the files")
    assert "Context from the delegating agent:\nonly under src/" in task
    assert "sub-agent" in task


# -- how a child ends ---------------------------------------------------------------------------


def test_run_child_with_a_provider_error_reports_failed_instead_of_raising(tmp_path):
    router = Router([], a=[{"error": {"message": "upstream exploded"}}])
    result = run_child(agent_for(tmp_path, router), "[a] go")
    assert result.status == "failed"
    assert result.reason == "upstream exploded"
    assert result.summary == ""


def test_run_child_over_its_timeout_is_timed_out_and_its_tool_is_cancelled(tmp_path):
    # the tool sleeps ten times the timeout: had the timeout come late, it would have ended
    router = Router([], a=[turn(call("sleepy", seconds=3, label="child"), text="Sleeping now.")])
    agent = agent_for(tmp_path, router, permissions="auto")
    result = run_child(agent, "[a] sleep", toolsets=["kit"], timeout=0.3)
    assert result.status == "timed_out"
    assert result.reason == "the sub-agent did not finish within 0.3 s and was stopped"
    assert result.summary == "Sleeping now."
    assert kit.LOG == ["start child", "cancelled child"]
    assert ended_sessions == [result.child_id]


def test_run_child_out_of_turns_reports_max_turns_with_its_last_words(tmp_path):
    turns = [turn(call("echo", text=str(n)), text=f"step {n}") for n in range(3)]
    result = run_child(
        agent_for(tmp_path, Router([], a=turns), max_turns=2), "[a] loop", toolsets=["kit"]
    )
    assert result.status == "max_turns"
    assert result.summary == "step 1"
    assert "2 turns" in result.reason


def test_run_child_ended_by_escalation_data_is_escalated_with_the_question(tmp_path):
    router = Router([], a=[turn(call("ask"), text="Two candidates.")])
    agent = agent_for(tmp_path, router, permissions="auto")
    result = run_child(agent, "[a] pick", toolsets=["kit"])
    assert result.status == "escalated"
    assert result.question == "[question] which one?"  # no escalation data: the turn's text
    assert result.summary == "Two candidates."


def test_children_beyond_the_concurrency_limit_wait_for_a_slot(tmp_path):
    router = Router(
        [],
        a=[turn(call("sleepy", seconds=0.2, label="a")), {"text": "a done"}],
        b=[turn(call("sleepy", seconds=0.2, label="b")), {"text": "b done"}],
    )
    agent = agent_for(tmp_path, router, crew_concurrency=1, permissions="auto")
    runner = agent.new_session().context.crew_runner

    async def both():
        return await asyncio.gather(
            runner.run_child("[a] one", toolsets=["kit"]),
            runner.run_child("[b] two", toolsets=["kit"]),
        )

    first, second = asyncio.run(both())
    assert (first.summary, second.summary) == ("a done", "b done")
    assert kit.LOG == ["start a", "end a", "start b", "end b"]
    assert second.duration_s >= 0.35  # it waited for the first child's slot


def test_children_sharing_a_deadline_stop_together_and_a_waiting_one_never_starts(tmp_path):
    async def both(runner):
        deadline = asyncio.get_running_loop().time() + 0.2
        return await asyncio.gather(
            runner.run_child("[a] one", toolsets=["kit"], deadline=deadline),
            runner.run_child("[b] two", toolsets=["kit"], deadline=deadline),
        )

    for _ in range(5):  # the outcome must not depend on scheduling luck
        router = Router(
            [],
            a=[turn(call("sleepy", seconds=30, label="a")), {"text": "never"}],
            b=[turn(call("sleepy", seconds=30, label="b")), {"text": "never"}],
        )
        agent = agent_for(tmp_path, router, crew_concurrency=1, permissions="auto")
        kit.LOG.clear()
        first, second = asyncio.run(both(agent.new_session().context.crew_runner))
        assert (first.status, second.status) == ("timed_out", "timed_out")
        assert kit.LOG == ["start a", "cancelled a"]


def test_run_child_of_an_unbound_runner_is_a_config_error(tmp_path):
    runner = CrewRunner(agent_for(tmp_path, Router([])), concurrency=1, timeout=1)
    with pytest.raises(neta.ConfigError, match="not bound"):
        asyncio.run(runner.run_child("go"))


def test_runner_still_runs_children_after_its_parent_moves_to_a_new_event_loop(tmp_path):
    router = Router(
        [],
        a=[{"text": "a1", "delay": 0.01}, {"text": "a2", "delay": 0.01}],  # b waits for a slot
        b=[{"text": "b1"}, {"text": "b2"}],
    )
    runner = agent_for(tmp_path, router, crew_concurrency=1).new_session().context.crew_runner

    async def both():
        return await asyncio.gather(runner.run_child("[a] one"), runner.run_child("[b] two"))

    for _ in range(2):  # as a host calling asyncio.run once per message does
        results = asyncio.run(both())
        assert [r.status for r in results] == ["completed", "completed"], results


def test_child_waiting_for_a_slot_until_the_deadline_is_reported_as_never_started(tmp_path):
    router = Router(
        [],
        a=[turn(call("sleepy", seconds=30, label="a")), {"text": "never"}],
        b=[{"text": "never"}],
        c=[{"text": "c done"}],
    )
    agent = agent_for(tmp_path, router, crew_concurrency=1, permissions="auto")
    runner = agent.new_session().context.crew_runner

    async def both_then_one_more():
        deadline = asyncio.get_running_loop().time() + 0.2
        stopped = await asyncio.gather(
            runner.run_child("[a] one", toolsets=["kit"], deadline=deadline),
            runner.run_child("[b] two", deadline=deadline),
        )
        return *stopped, await runner.run_child("[c] three", timeout=5)

    first, second, third = asyncio.run(both_then_one_more())
    assert third.summary == "c done"  # neither stopped child kept the slot
    # the limit each reports is what was left of the shared deadline when it was asked for
    assert re.fullmatch(
        r"the sub-agent did not finish within 0\.\d+ s and was stopped", first.reason
    )
    assert first.tool_calls == ("sleepy",)
    assert second.status == "timed_out"
    never = r"the sub-agent never started: it waited for a free slot \(1 at a time\) until the "
    assert re.fullmatch(never + r"time limit of 0\.\d+ s", second.reason)
    assert second.tool_calls == ()
    assert router.children["b"].received == []
    assert ended_sessions == [first.child_id, third.child_id]


def test_run_child_reports_the_tools_it_called_and_the_toolsets_it_was_not_given(tmp_path):
    router = Router(
        [], a=[turn(call("echo", text="1"), call("echo", text="2")), {"text": "Echoed."}]
    )
    result = run_child(
        agent_for(tmp_path, router), "[a] echo", toolsets=["kit", "slow", "kit", "nonexistent"]
    )
    assert result.status == "completed", result.reason
    assert result.toolsets == ("kit",)
    assert result.tool_calls == ("echo", "echo")
    assert result.toolsets_not_given == ("slow", "nonexistent")
    defaults = run_child(agent_for(tmp_path, Router([], a=[{"text": "ok"}])), "[a] go")
    assert defaults.toolsets_not_given == ()  # only what was asked for by name is reported
