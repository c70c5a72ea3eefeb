"""The crew through the runtime: a parent delegating to children, all on scripted models."""

import asyncio

import pytest

from neta.events import RunFinished, RunStarted, TodoUpdate, ToolCallStart, ToolResultEvent
from tests.plugins.crew.crew_kit import (
    BASE_TOOLS,
    Exploding,
    Router,
    call,
    crew_agent,
    ended_sessions,
    turn,
    wait_log,
)


class Asker:
    """A clarify callback that answers ``answer`` and records the questions."""

    def __init__(self, answer="SQLite"):
        self.answer = answer
        self.asked = []

    async def __call__(self, question, choices):
        self.asked.append(question)
        return self.answer


def parent_results(events, name):
    return [
        e
        for e in events
        if isinstance(e, ToolResultEvent) and e.name == name and e.agent_id is None
    ]


def run(agent, **kwargs):
    session = agent.new_session(clarify=Asker())
    return asyncio.run(agent.run("go", session=session, **kwargs)), session


def test_delegate_parallel_runs_three_children_at_once_in_order_with_one_failing(tmp_path):
    tasks = [{"goal": f"[{key}] survey part {key}"} for key in "abc"]
    router = Router(
        [
            turn(call("delegate_parallel", tasks=tasks)),
            {
                "text": "Two parts surveyed.",
                "expect": {"last_message_contains": "3 sub-agents ran: 2 completed, 1 failed."},
            },
        ],
        a=[{"text": "Part a has 3 files.", "delay": 0.3}],
        b=[{"error": {"message": "upstream exploded"}, "delay": 0.3}],
        c=[{"text": "Part c is empty.", "delay": 0.1}],
    )
    result, _ = run(crew_agent(tmp_path, router))
    # at once: every child started before the first one (c, the quickest) finished
    order = [
        (type(e).__name__, e.agent_id)
        for e in result.events
        if isinstance(e, RunStarted | RunFinished) and e.agent_id
    ]
    first_end = next(i for i, (kind, _) in enumerate(order) if kind == "RunFinished")
    assert [kind for kind, _ in order[:first_end]] == ["RunStarted"] * 3
    assert result.outcome == "completed", result.reason
    [event] = parent_results(result.events, "delegate_parallel")
    children = event.data["children"]
    assert [c["status"] for c in children] == ["completed", "failed", "completed"]
    assert [c["summary"] for c in children] == ["Part a has 3 files.", "", "Part c is empty."]
    assert children[1]["reason"] == "upstream exploded"
    content = event.content
    positions = [
        content.index(f"## Task {n}: [{k}] survey") for n, k in ((1, "a"), (2, "b"), (3, "c"))
    ]
    assert positions == sorted(positions)
    assert "Reason: upstream exploded" in content
    assert not event.is_error
    assert len(set(ended_sessions)) == 3


def test_child_is_offered_no_clarify_and_its_prompt_names_no_tool_it_lacks(tmp_path):
    router = Router(
        [turn(call("delegate_task", goal="[probe] look around")), {"text": "ok"}],
        probe=[{"text": "Looked."}],
    )
    result, _ = run(crew_agent(tmp_path, router))
    assert result.outcome == "completed", result.reason
    parent_request = router.parent.received[0]
    assert {"clarify", "delegate_task", "delegate_parallel"} <= set(parent_request.tool_names)
    assert "escalate" not in parent_request.tool_names
    [child_request] = router.children["probe"].received
    assert child_request.tool_names == [*BASE_TOOLS, "todo", "escalate"]
    system = child_request.messages[0].content
    for missing in ("clarify", "delegate_task", "delegate_parallel"):
        assert missing not in system.lower()
    for present in ("## escalate", "## todo", "## patch"):
        assert present in system


def test_child_at_the_depth_limit_has_no_delegate_tools_and_starts_no_grandchild(tmp_path):
    wanted = ["base", "crew", "interaction", "slow", "nonexistent"]
    router = Router(
        [
            turn(call("delegate_task", goal="[kid] split the work", toolsets=wanted)),
            {"text": "ok", "expect": {"last_message_contains": "I could not delegate."}},
        ],
        kid=[
            turn(call("delegate_task", goal="[grandkid] a part")),
            {
                "text": "I could not delegate.",
                "expect": {"last_message_contains": "unknown tool 'delegate_task'"},
            },
        ],
        grandkid=[{"text": "never"}],
    )
    result, _ = run(crew_agent(tmp_path, router))
    assert result.outcome == "completed", result.reason
    assert router.children["kid"].received[0].tool_names == [*BASE_TOOLS, "escalate"]
    assert router.children["grandkid"].received == []
    [delegated] = parent_results(result.events, "delegate_task")
    assert delegated.data["children"][0]["toolsets"] == ["base"]
    [refused] = [e for e in result.events if isinstance(e, ToolResultEvent) and e.agent_id]
    assert refused.is_error
    assert refused.agent_id == delegated.data["children"][0]["child_id"]


def test_deeper_crew_depth_lets_children_delegate_but_not_grandchildren(tmp_path):
    with_crew = ["base", "crew"]
    router = Router(
        [turn(call("delegate_task", goal="[kid] split", toolsets=with_crew)), {"text": "ok"}],
        kid=[
            turn(
                call("delegate_task", goal="[grandkid] a part", toolsets=with_crew),
                expect={"tools_include": ["delegate_task", "delegate_parallel", "escalate"]},
            ),
            {"text": "kid done", "expect": {"last_message_contains": "grandkid done"}},
        ],
        grandkid=[
            {
                "text": "grandkid done",
                "expect": {"tools_exclude": ["delegate_task"], "tools_include": ["escalate"]},
            }
        ],
    )
    result, parent = run(crew_agent(tmp_path, router, crew_depth=2))
    assert result.outcome == "completed", result.reason
    [delegated] = parent_results(result.events, "delegate_task")
    kid_id = delegated.data["children"][0]["child_id"]
    [kid_delegated] = [
        e for e in result.events if isinstance(e, ToolResultEvent) and e.agent_id == kid_id
    ]
    grandkid_id = kid_delegated.data["children"][0]["child_id"]
    finished = {e.agent_id for e in result.events if isinstance(e, RunFinished)}
    assert finished == {None, kid_id, grandkid_id}
    assert {e.session_id for e in result.events} == {parent.session_id}


def test_escalated_question_reaches_the_parent_which_asks_the_user_and_delegates_again(tmp_path):
    question = "Postgres or SQLite?"
    router = Router(
        [
            turn(call("delegate_task", goal="[db] set up the database")),
            turn(
                call("clarify", question=question),
                expect={"last_message_contains": f"The sub-agent stopped to ask: {question}"},
            ),
            turn(
                call("delegate_task", goal="[db2] set up SQLite", context="The user chose SQLite."),
                expect={"last_message_contains": "User answered: SQLite"},
            ),
            {"text": "SQLite is ready.", "expect": {"last_message_contains": "SQLite is set up."}},
        ],
        db=[turn(call("escalate", question=question), text="Two options."), {"text": "never"}],
        db2=[{"text": "SQLite is set up.", "expect": {"last_message_contains": "chose SQLite"}}],
    )
    agent = crew_agent(tmp_path, router)
    asker = Asker("SQLite")
    session = agent.new_session(clarify=asker)
    result = asyncio.run(agent.run("set up a database", session=session))
    assert result.outcome == "completed", result.reason
    escalated, completed = parent_results(result.events, "delegate_task")
    assert escalated.content.startswith("Status: escalated")
    assert f"The sub-agent stopped to ask: {question}" in escalated.content
    assert escalated.data["children"][0]["status"] == "escalated"
    assert escalated.data["children"][0]["question"] == question
    assert not escalated.is_error
    assert router.children["db"].remaining == 1  # the child stopped at its question
    assert asker.asked == [question]
    assert completed.data["children"][0]["status"] == "completed"


def test_cancelling_the_parent_run_cancels_its_children_and_leaves_nothing_running(tmp_path):
    tasks = [{"goal": f"[{key}] wait", "toolsets": ["slow"]} for key in "ab"]
    router = Router(
        [turn(call("delegate_parallel", tasks=tasks)), {"text": "never"}],
        a=[turn(call("wait", seconds=30, label="a")), {"text": "never"}],
        b=[turn(call("wait", seconds=30, label="b")), {"text": "never"}],
    )
    agent = crew_agent(tmp_path, router, toolsets=["slow"], permissions="auto")
    events = []

    async def scenario():
        async with asyncio.timeout(5):
            task = asyncio.create_task(agent.run("go", on_event=events.append))
            while sum(isinstance(e, ToolCallStart) and e.name == "wait" for e in events) < 2:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return asyncio.all_tasks() - {asyncio.current_task()}

    left_running = asyncio.run(scenario())
    assert left_running == set()
    assert sorted(wait_log) == ["cancelled a", "cancelled b", "start a", "start b"]
    children = {e.agent_id for e in events if isinstance(e, ToolCallStart) and e.name == "wait"}
    cancelled = {e.agent_id for e in events if isinstance(e, RunFinished)}
    assert cancelled == {*children, None}
    assert all(e.outcome == "cancelled" for e in events if isinstance(e, RunFinished))
    assert events[-1].agent_id is None
    assert set(ended_sessions) == children


@pytest.mark.parametrize("count", [1, 3])
def test_cancelling_the_parent_waits_for_every_child_and_emits_their_ends_first(tmp_path, count):
    keys = "abc"[:count]
    tasks = [{"goal": f"[{key}] wait", "toolsets": ["slow"]} for key in keys]
    children = {  # the first child is cleaned up well before the others
        key: [turn(call("wait", seconds=30, label=key, linger=0.02 + 0.15 * n)), {"text": "x"}]
        for n, key in enumerate(keys)
    }
    router = Router([turn(call("delegate_parallel", tasks=tasks)), {"text": "never"}], **children)
    agent = crew_agent(tmp_path, router, toolsets=["slow"], permissions="auto")
    events = []
    log_at_parent_end = []

    def on_event(event):
        events.append(event)
        if isinstance(event, RunFinished) and event.agent_id is None:
            log_at_parent_end.extend(wait_log)

    async def scenario():
        async with asyncio.timeout(5):
            task = asyncio.create_task(agent.run("go", on_event=on_event))
            while sum(isinstance(e, ToolCallStart) and e.name == "wait" for e in events) < count:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return asyncio.all_tasks() - {asyncio.current_task()}

    assert asyncio.run(scenario()) == set()
    assert sorted(log_at_parent_end) == sorted(
        [f"{what} {key}" for key in keys for what in ("start", "cancelled", "cleaned up")]
    )
    parent_end = next(
        i for i, e in enumerate(events) if isinstance(e, RunFinished) and e.agent_id is None
    )
    assert parent_end == len(events) - 1  # nothing of a child arrives after the parent's end
    child_ends = [e for e in events if isinstance(e, RunFinished) and e.agent_id is not None]
    assert len(child_ends) == count
    assert all(e.outcome == "cancelled" for e in child_ends)
    waits = [e for e in events if isinstance(e, ToolResultEvent) and e.name == "wait"]
    assert len(waits) == count  # every started call got its result event
    [delegation] = parent_results(events, "delegate_parallel")
    assert "cancelled" in delegation.content


def test_child_events_reach_the_parents_on_event_tagged_with_the_child_id(tmp_path):
    todos = [{"id": "1", "content": "look around", "status": "in_progress"}]
    router = Router(
        [turn(call("delegate_task", goal="[kid] plan and look")), {"text": "ok"}],
        kid=[turn(call("todo", todos=todos), call("list_dir", path=".")), {"text": "Looked."}],
    )
    agent = crew_agent(tmp_path, router, permissions="auto")
    parent = agent.new_session(clarify=Asker())
    seen = []
    result = asyncio.run(agent.run("go", session=parent, on_event=seen.append))
    assert result.outcome == "completed", result.reason
    [delegated] = parent_results(seen, "delegate_task")
    child_id = delegated.data["children"][0]["child_id"]
    from_child = [e for e in seen if e.agent_id is not None]
    assert {e.agent_id for e in from_child} == {child_id}
    assert [e.type for e in from_child if e.type != "text_delta"] == [
        "run_started",
        "tool_call_start",
        "permission_decision",
        "tool_call_start",
        "permission_decision",
        "todo_update",
        "tool_result",
        "tool_result",
        "run_finished",
    ]
    assert any(isinstance(e, TodoUpdate) for e in from_child)
    assert {e.session_id for e in seen} == {parent.session_id}
    assert parent.context.todo_store.snapshot().items == ()  # the child's list is its own
    assert result.events == seen


def test_delegate_parallel_as_a_whole_stops_at_the_crew_timeout(tmp_path):
    tasks = [{"goal": f"[{key}] wait", "toolsets": ["slow"]} for key in "ab"]
    router = Router(
        [turn(call("delegate_parallel", tasks=tasks)), {"text": "Both too slow."}],
        a=[turn(call("wait", seconds=30, label="a")), {"text": "never"}],
        b=[turn(call("wait", seconds=30, label="b")), {"text": "never"}],
    )
    agent = crew_agent(
        tmp_path,
        router,
        toolsets=["slow"],
        crew_timeout=0.3,
        crew_concurrency=1,
        permissions="auto",
    )
    result, _ = run(agent)  # had the timeout not held, each child would have answered
    assert result.outcome == "completed", result.reason
    [event] = parent_results(result.events, "delegate_parallel")
    assert [c["status"] for c in event.data["children"]] == ["timed_out", "timed_out"]
    assert wait_log == ["start a", "cancelled a"]  # b waited for a slot until the deadline
    assert event.is_error


def test_delegate_parallel_with_huge_replies_shows_the_parent_every_task(tmp_path):
    keys = "abcd"
    tasks = [{"goal": f"[{key}] dump everything"} for key in keys]
    replies = {key: [{"text": f"start-{key} {'x' * 12_000} end-{key}"}] for key in keys}
    router = Router([turn(call("delegate_parallel", tasks=tasks)), {"text": "ok"}], **replies)
    result, _ = run(crew_agent(tmp_path, router))
    assert result.outcome == "completed", result.reason
    seen = router.parent.received[1].messages[-1].content  # what the parent's model read
    assert seen.startswith("4 sub-agents ran: 4 completed.")
    for number, key in enumerate(keys, start=1):
        assert f"## Task {number}: [{key}] dump everything" in seen
        assert f"start-{key}" in seen
        assert f"end-{key}" in seen
    assert "characters of the sub-agent's reply omitted" in seen
    [event] = parent_results(result.events, "delegate_parallel")
    assert event.data["children"][3]["summary"] == replies["d"][0]["text"]  # hosts get it all


def test_child_ended_by_another_tool_is_not_given_its_grandchilds_question(tmp_path):
    with_crew = ["base", "crew", "slow"]
    router = Router(
        [turn(call("delegate_task", goal="[kid] split", toolsets=with_crew)), {"text": "ok"}],
        kid=[
            turn(call("delegate_task", goal="[grandkid] a part")),
            turn(
                call("hold", reason="waiting for approval"),
                expect={"last_message_contains": "Which branch?"},
            ),
        ],
        grandkid=[turn(call("escalate", question="Which branch?")), {"text": "never"}],
    )
    agent = crew_agent(tmp_path, router, crew_depth=2, toolsets=["slow"], permissions="auto")
    result, _ = run(agent)
    assert result.outcome == "completed", result.reason
    [delegated] = parent_results(result.events, "delegate_task")
    [kid] = delegated.data["children"]
    assert kid["status"] == "escalated"
    assert kid["question"] == "[hold] waiting for approval"


def test_child_whose_provider_raises_fails_and_its_run_is_reported_finished(tmp_path):
    router = Router(
        [
            turn(call("delegate_task", goal="[kid] look")),
            {"text": "ok", "expect": {"last_message_contains": "KeyError"}},
        ],
    )
    router.children["kid"] = Exploding([turn(call("list_dir", path="."), text="Listing first.")])
    result, parent = run(crew_agent(tmp_path, router))
    assert result.outcome == "completed", result.reason
    [delegated] = parent_results(result.events, "delegate_task")
    [kid] = delegated.data["children"]
    assert kid["status"] == "failed"
    assert kid["reason"] == "the sub-agent failed: KeyError: 'choices'"
    assert kid["summary"] == "Listing first."
    assert kid["tool_calls"] == ["list_dir"]
    [finished] = [
        e for e in result.events if isinstance(e, RunFinished) and e.agent_id == kid["child_id"]
    ]
    assert finished.outcome == "error"
    assert "KeyError: 'choices'" in finished.reason
    assert finished.session_id == parent.session_id
    assert ended_sessions == [kid["child_id"]]


def test_child_stopped_at_its_time_limit_says_so_in_its_run_finished_event(tmp_path):
    router = Router(
        [turn(call("delegate_task", goal="[kid] wait", toolsets=["slow"])), {"text": "ok"}],
        kid=[turn(call("wait", seconds=30, label="kid")), {"text": "never"}],
    )
    agent = crew_agent(tmp_path, router, toolsets=["slow"], crew_timeout=0.3, permissions="auto")
    result, _ = run(agent)
    assert result.outcome == "completed", result.reason
    [delegated] = parent_results(result.events, "delegate_task")
    [kid] = delegated.data["children"]
    assert kid["status"] == "timed_out"
    assert kid["tool_calls"] == ["wait"]
    assert "Tools it called before it stopped: wait" in delegated.content
    [finished] = [e for e in result.events if isinstance(e, RunFinished) and e.agent_id]
    assert finished.outcome == "cancelled"
    assert (
        finished.reason
        == kid["reason"]
        == ("the sub-agent did not finish within 0.3 s and was stopped")
    )
