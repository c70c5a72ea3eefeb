"""The crew toolsets through the catalog, and each tool as a function over a fake runner."""

import asyncio
import dataclasses
import json

import pytest

import neta
import neta.crew
import neta_crew.plugin
from neta.session_tools import resolve_session_toolsets
from neta_crew import delegate_parallel, delegate_task, escalate, report


class FakeRunner:
    """A ``SubAgentRunner`` that answers from a table of goals after an optional delay."""

    timeout = 5.0

    def __init__(self, **outcomes):
        self.outcomes = outcomes
        self.calls = []
        self.deadlines = []

    async def run_child(self, goal, context="", toolsets=None, *, timeout=None, deadline=None):
        self.calls.append((goal, context, toolsets, timeout))
        self.deadlines.append(deadline)
        outcome = self.outcomes[goal]
        if isinstance(outcome, Exception):
            raise outcome
        delay, result = outcome
        await asyncio.sleep(delay)
        return result


def done(child_id, summary="done", **fields):
    return neta.ChildResult(child_id=child_id, status="completed", summary=summary, **fields)


def invoke(tool_module, session, **args):
    tool = tool_module.build(session)
    return asyncio.run(tool.invoke(tool_module.SCHEMA.args.model_validate(args)))


# -- through the catalog ------------------------------------------------------------------------


def test_crew_plugin_announces_crew_for_runners_and_crew_child_for_children(make_pm):
    pm = make_pm(crew=neta_crew.plugin)
    specs = [(s.name, s.requires) for s in pm.toolset_specs()]
    assert specs == [("crew", "crew_runner"), ("crew_child", neta.crew.CREW_PARENT)]
    catalog = pm.catalog()
    assert catalog.tool_names(["crew"]) == ["delegate_task", "delegate_parallel"]
    assert catalog.tool_names(["crew_child"]) == ["escalate"]
    for schema in catalog:
        assert "\n" not in schema.when_to_use
        assert schema.parameters(strict=True)["additionalProperties"] is False
    assert pm.problems == []


def test_crew_toolset_needs_a_runner_and_crew_child_a_parent(make_pm, session):
    pm = make_pm(crew=neta_crew.plugin)
    plain = resolve_session_toolsets(pm, session)
    assert plain.enabled == ()
    session.crew_runner = FakeRunner()
    assert resolve_session_toolsets(pm, session).enabled == ("crew",)
    child = neta.SessionContext(
        workspace=session.workspace, entry="crew", extras={neta.crew.CREW_PARENT: "p"}
    )
    assert resolve_session_toolsets(pm, child).enabled == ("crew_child",)


def test_crew_tools_build_for_a_session_without_a_runner(make_pm, session):
    pm = make_pm(crew=neta_crew.plugin)
    tools = neta.build_session_tools(pm, session, ["crew", "crew_child"])
    assert list(tools) == ["delegate_task", "delegate_parallel", "escalate"]
    assert pm.problems == []


# -- delegate_task as a function ----------------------------------------------------------------


def test_delegate_task_function_hands_goal_context_and_toolsets_to_the_runner(session):
    runner = FakeRunner(**{"Fix the bug": (0, done("c1", "Fixed in a.py.", duration_s=2.5))})
    session.crew_runner = runner
    result = invoke(
        delegate_task, session, goal=" Fix the bug ", context="see a.py", toolsets=["base"]
    )
    assert runner.calls == [("Fix the bug", "see a.py", ["base"], None)]
    assert result.content == "Status: completed (sub-agent c1; 2.5 s)\nSummary:\nFixed in a.py."
    assert not result.is_error
    assert result.data["children"][0]["child_id"] == "c1"


def test_delegate_task_function_with_a_failed_child_is_an_error_result(session):
    failed = neta.ChildResult(child_id="c1", status="failed", reason="upstream exploded")
    session.crew_runner = FakeRunner(go=(0, failed))
    result = invoke(delegate_task, session, goal="go")
    assert result.is_error
    assert "Status: failed" in result.content
    assert "Reason: upstream exploded" in result.content


def test_delegate_task_function_without_a_runner_is_a_tool_error(session):
    with pytest.raises(neta.ToolError, match="cannot start sub-agents"):
        invoke(delegate_task, session, goal="go")


def test_delegate_tools_outlast_the_runners_child_timeout(session):
    session.crew_runner = FakeRunner()
    for module in (delegate_task, delegate_parallel):
        tool = module.build(session)
        assert tool.timeout is not None
        assert tool.timeout > FakeRunner.timeout


# -- delegate_parallel as a function ------------------------------------------------------------


def test_delegate_parallel_function_keeps_the_order_of_the_tasks(session):
    runner = FakeRunner(
        slow=(0.2, done("c1", "slow done")),
        fast=(0.0, done("c2", "fast done")),
    )
    session.crew_runner = runner
    result = invoke(delegate_parallel, session, tasks=[{"goal": "slow"}, {"goal": "fast"}])
    assert [c["summary"] for c in result.data["children"]] == ["slow done", "fast done"]
    assert result.content.index("## Task 1: slow") < result.content.index("## Task 2: fast")
    assert result.content.startswith("2 sub-agents ran: 2 completed.")
    [deadline] = set(runner.deadlines)  # one deadline for all, the runner's timeout away
    assert deadline is not None
    assert {call[3] for call in runner.calls} == {None}


def test_delegate_parallel_function_reports_a_raising_runner_as_one_failed_child(session):
    session.crew_runner = FakeRunner(good=(0, done("c1")), bad=RuntimeError("no model"))
    result = invoke(delegate_parallel, session, tasks=[{"goal": "good"}, {"goal": "bad"}])
    assert [c["status"] for c in result.data["children"]] == ["completed", "failed"]
    assert "RuntimeError: no model" in result.content
    assert not result.is_error


@pytest.mark.parametrize("count", [0, delegate_parallel.MAX_TASKS + 1])
def test_delegate_parallel_arguments_need_one_to_max_tasks(count):
    with pytest.raises(ValueError, match="tasks"):
        delegate_parallel.DelegateParallelArgs.model_validate({"tasks": [{"goal": "g"}] * count})


# -- escalate as a function ---------------------------------------------------------------------


def test_escalate_function_ends_the_turn_with_the_question_in_its_data(session):
    result = invoke(escalate, session, question="  Postgres or SQLite?  ")
    assert result.end_turn
    assert result.data == {neta.crew.ESCALATED_KEY: "Postgres or SQLite?"}
    assert "Postgres or SQLite?" in result.content


def test_escalate_arguments_need_a_question():
    with pytest.raises(ValueError, match="question"):
        escalate.EscalateArgs.model_validate({"question": "  "})


# -- how results read ---------------------------------------------------------------------------


def test_report_of_an_escalated_child_gives_the_question_and_what_to_do():
    result = neta.ChildResult(
        child_id="0123456789abcdef",
        status="escalated",
        question="Which database?",
        duration_s=1.25,
        toolsets=("base", "planning"),
    )
    text = report.describe(result)
    assert text.startswith(
        "Status: escalated (sub-agent 01234567; 1.2 s; toolsets: base, planning)"
    )
    assert "The sub-agent stopped to ask: Which database?" in text
    assert "ask the user if you can" in text
    assert report.succeeded(result)


def test_report_of_a_timed_out_child_gives_the_reason_and_its_last_words():
    result = neta.ChildResult(
        child_id="c", status="timed_out", summary="Half way.", reason="too slow"
    )
    text = report.describe(result)
    assert "Reason: too slow" in text
    assert text.endswith("Its last words before it stopped:\nHalf way.")
    assert not report.succeeded(result)


def test_report_data_is_plain_json():
    data = report.as_data(done("c", toolsets=("base",)))
    assert json.loads(json.dumps(data))["toolsets"] == ["base"]


def test_report_of_a_stopped_child_lists_the_tools_it_called_and_toolsets_not_given():
    result = neta.ChildResult(
        child_id="c",
        status="timed_out",
        reason="too slow",
        tool_calls=("write_file", "bash", "write_file"),
        toolsets=("base",),
        toolsets_not_given=("slow", "nonexistent"),
    )
    text = report.describe(result)
    assert "Tools it called before it stopped: write_file (2), bash" in text
    assert "Toolsets asked for but not given: slow, nonexistent" in text
    completed = dataclasses.replace(result, status="completed", summary="Done.")
    assert "Tools it called" not in report.describe(completed)  # its summary says what it did


def test_report_of_a_huge_reply_keeps_its_head_and_tail_within_the_limit():
    summary = "HEAD " + "x" * 50_000 + " TAIL"
    text = report.describe(done("c", summary), limit=3_000)
    assert len(text) < 3_200
    assert "HEAD" in text
    assert text.endswith("TAIL")
    assert "characters of the sub-agent's reply omitted" in text


def test_delegate_parallel_function_shares_its_output_budget_between_the_replies(session):
    huge = "HEAD " + "x" * 100_000 + " TAIL"
    session.crew_runner = FakeRunner(
        big=(0, done("c1", huge)), small=(0, done("c2", "short and whole"))
    )
    result = invoke(delegate_parallel, session, tasks=[{"goal": "big"}, {"goal": "small"}])
    assert len(result.content) <= report.REPLY_BUDGET + 1_000
    assert "short and whole" in result.content
    assert "HEAD" in result.content
    assert "TAIL" in result.content
    assert len(result.content) > report.REPLY_BUDGET * 0.9  # the small one's share
    assert result.data["children"][0]["summary"] == huge
