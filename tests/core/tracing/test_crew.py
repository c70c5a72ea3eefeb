"""A crew run's spans: each child's run under the parent's tool call that started it."""

import asyncio

from tests.core.tracing.spans_kit import attrs, children, event_names, named, one
from tests.plugins.crew.crew_kit import Router, call, crew_agent, turn


def test_a_child_s_run_span_is_a_child_of_the_parent_s_delegate_task_span(tmp_path, spans):
    router = Router(
        [turn(call("delegate_task", goal="[kid] count the files")), {"text": "the kid says 3"}],
        kid=[turn(call("todo", todos=[{"id": "1", "content": "count"}])), {"text": "3"}],
    )
    agent = crew_agent(tmp_path, router, permissions="auto", name="lead")
    result = asyncio.run(agent.run("go"))
    assert result.outcome == "completed", result.reason
    parent, child = named(spans, "invoke_agent")
    assert parent.parent is None
    delegated = one(spans, "execute_tool delegate_task")
    assert delegated.parent.span_id == parent.context.span_id
    assert child.parent.span_id == delegated.context.span_id
    assert child.context.trace_id == parent.context.trace_id
    assert attrs(child)["gen_ai.agent.name"] == "lead"
    assert attrs(child)["gen_ai.agent.id"] != result.session_id
    assert attrs(child)["gen_ai.conversation.id"] == attrs(child)["gen_ai.agent.id"]
    assert attrs(child)["neta.agent.depth"] == 1
    assert "gen_ai.agent.id" not in attrs(parent)
    assert [s.name for s in children(spans, child)] == ["chat", "execute_tool todo", "chat"]
    # the child's events are its spans' only: the parent's spans do not repeat them
    todo = one(spans, "execute_tool todo")
    assert "neta.todo_update" in event_names(todo)
    assert "neta.todo_update" not in event_names(delegated)
    assert event_names(child)[0] == "neta.run_started"
    assert event_names(parent).count("neta.run_started") == 1


def test_parallel_children_each_run_under_the_delegate_parallel_span(tmp_path, spans):
    tasks = [{"goal": f"[kid{n}] part {n}"} for n in range(3)]
    router = Router(
        [turn(call("delegate_parallel", tasks=tasks)), {"text": "all done"}],
        **{f"kid{n}": [{"text": f"part {n} done"}] for n in range(3)},
    )
    result = asyncio.run(crew_agent(tmp_path, router, permissions="auto").run("go"))
    assert result.outcome == "completed", result.reason
    delegated = one(spans, "execute_tool delegate_parallel")
    kids = [s for s in named(spans, "invoke_agent") if s.parent is not None]
    assert len(kids) == 3
    assert all(kid.parent.span_id == delegated.context.span_id for kid in kids)
    assert len({attrs(kid)["gen_ai.agent.id"] for kid in kids}) == 3
