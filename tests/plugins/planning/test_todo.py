"""The ``todo`` tool: as a function, through the catalog, and through the runtime."""

import asyncio
import json

import pytest

import neta
import neta.todos
import neta_planning.plugin
from neta.events import TodoUpdate, ToolResultEvent
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from neta_planning import todo


@pytest.fixture
def store():
    return neta.todos.InMemoryTodoStore()


@pytest.fixture
def events():
    return []


@pytest.fixture
def planning_session(session, store, events):
    session.todo_store = store
    session.emit = events.append
    return session


def run_todo(session, **args):
    tool = todo.build(session)
    return asyncio.run(tool.invoke(todo.TodoArgs.model_validate(args)))


PLAN = [
    {"id": "1", "content": "Read the parser", "status": "in_progress"},
    {"id": "2", "content": "Fix the bug"},
    {"id": "3", "content": "Add a test"},
]


# -- as a function ------------------------------------------------------------------------------


def test_todo_function_writes_the_list_and_returns_it_with_counts_and_revision(
    planning_session, store, events
):
    result = run_todo(planning_session, todos=PLAN)
    assert result.content.splitlines() == [
        "Todo list, revision 1: 2 pending, 1 in_progress, 0 completed, 0 cancelled",
        "- [in_progress] 1: Read the parser",
        "- [pending] 2: Fix the bug",
        "- [pending] 3: Add a test",
    ]
    assert result.data["revision"] == 1
    assert result.data["counts"]["pending"] == 2
    assert store.snapshot().revision == 1
    [event] = events
    assert isinstance(event, TodoUpdate)
    assert event.revision == 1
    assert [item["id"] for item in event.todos] == ["1", "2", "3"]
    assert event.counts == {"pending": 2, "in_progress": 1, "completed": 0, "cancelled": 0}


def test_todo_function_without_todos_reads_the_list_and_emits_nothing(
    planning_session, store, events
):
    store.write([neta.todos.TodoChange(id="a", content="Read")])
    result = run_todo(planning_session)
    assert result.content == (
        "Todo list, revision 1: 1 pending, 0 in_progress, 0 completed, 0 cancelled\n"
        "- [pending] a: Read"
    )
    assert events == []


def test_todo_function_on_an_empty_list_says_it_is_empty(planning_session):
    assert run_todo(planning_session).content.endswith("(the list is empty)")


def test_todo_function_merge_moves_one_item_along(planning_session, events):
    run_todo(planning_session, todos=PLAN)
    result = run_todo(
        planning_session,
        todos=[{"id": "1", "status": "completed"}, {"id": "2", "status": "in_progress"}],
        merge=True,
    )
    assert "- [completed] 1: Read the parser" in result.content
    assert "- [in_progress] 2: Fix the bug" in result.content
    assert [e.revision for e in events] == [1, 2]


def test_todo_function_refusal_raises_a_tool_error_and_emits_nothing(
    planning_session, store, events
):
    run_todo(planning_session, todos=PLAN)
    with pytest.raises(neta.ToolError, match="only one todo item may be in_progress"):
        run_todo(planning_session, todos=[{"id": "2", "status": "in_progress"}], merge=True)
    assert store.snapshot().revision == 1
    assert len(events) == 1


def test_todo_function_without_a_store_is_a_tool_error(session):
    with pytest.raises(neta.ToolError, match="no todo list"):
        run_todo(session)


# -- through the catalog ------------------------------------------------------------------------


def test_planning_plugin_registers_todo_in_a_toolset_that_needs_a_todo_store(make_pm):
    pm = make_pm(planning=neta_planning.plugin)
    schema = pm.catalog().get("todo")
    assert schema.toolset == "planning"
    assert [(s.name, s.requires) for s in pm.toolset_specs()] == [("planning", "todo_store")]
    assert pm.hook_names("planning") == ["neta_build_tools", "neta_tools", "neta_toolsets"]
    assert pm.problems == []


def test_todo_through_the_catalog_validates_json_arguments_and_runs(
    make_pm, planning_session, events
):
    pm = make_pm(planning=neta_planning.plugin)
    tools = neta.build_session_tools(pm, planning_session, ["planning"])
    bound = tools["todo"]
    args = bound.schema.args.model_validate_json(json.dumps({"todos": PLAN}))
    result = asyncio.run(bound.tool.invoke(args))
    assert "revision 1" in result.content
    assert len(events) == 1
    assert pm.problems == []


def test_todo_schema_is_strict_mode_compatible_and_lists_the_statuses(make_pm):
    schema = make_pm(planning=neta_planning.plugin).catalog().get("todo")
    strict = schema.parameters(strict=True)
    item = strict["$defs"]["TodoChange"]
    assert item["additionalProperties"] is False
    assert sorted(item["required"]) == ["active_form", "content", "id", "status"]
    assert "in_progress" in json.dumps(item["properties"]["status"])


def test_todo_arguments_with_an_unknown_status_are_rejected(make_pm):
    schema = make_pm(planning=neta_planning.plugin).catalog().get("todo")
    with pytest.raises(ValueError, match="status"):
        schema.args.model_validate({"todos": [{"id": "1", "content": "x", "status": "done"}]})


def test_todo_guidance_never_names_clarify_and_when_to_use_is_one_line(make_pm):
    schema = make_pm(planning=neta_planning.plugin).catalog().get("todo")
    assert "clarify" not in schema.guidance.lower()
    assert "clarify" not in schema.when_to_use.lower()
    assert "\n" not in schema.when_to_use
    assert "in_progress" in schema.guidance


# -- through the runtime ------------------------------------------------------------------------


def agent_for(tmp_path, turns, **options):
    pm = neta.create_plugin_manager(
        load_entrypoints=False, plugins=[("planning", neta_planning.plugin)]
    )
    provider = ScriptedProvider(turns)
    return Agent(provider=provider, plugin_manager=pm, workspace=tmp_path, **options), provider


def todo_call(todos=None, merge=False):
    arguments = {"merge": merge} if todos is None else {"todos": todos, "merge": merge}
    return {"tool_calls": [{"name": "todo", "arguments": arguments}]}


def test_plan_is_created_and_advanced_through_the_runtime(tmp_path):
    agent, provider = agent_for(
        tmp_path,
        [
            {
                **todo_call(PLAN),
                "expect": {"tools_include": ["todo"], "system_includes": ["## todo"]},
            },
            todo_call(
                [{"id": "1", "status": "completed"}, {"id": "2", "status": "in_progress"}], True
            ),
            todo_call(
                [{"id": "2", "status": "completed"}, {"id": "3", "status": "completed"}], True
            ),
            {"text": "All done.", "expect": {"last_message_contains": "3 completed"}},
        ],
    )
    session = agent.new_session()
    result = asyncio.run(agent.run("fix the parser bug", session=session))
    assert result.outcome == "completed", result.reason
    updates = [e for e in result.events if isinstance(e, TodoUpdate)]
    assert [u.revision for u in updates] == [1, 2, 3]
    assert all(u.session_id == session.session_id for u in updates)
    assert updates[-1].counts == {"pending": 0, "in_progress": 0, "completed": 3, "cancelled": 0}
    assert session.context.todo_store.snapshot().revision == 3
    assert provider.remaining == 0


def test_two_items_in_progress_are_rejected_through_the_runtime_and_the_store_is_unchanged(
    tmp_path,
):
    agent, _ = agent_for(
        tmp_path,
        [
            todo_call(PLAN),
            todo_call([{"id": "2", "status": "in_progress"}], merge=True),
            {"text": "ok", "expect": {"last_message_contains": "only one todo item"}},
        ],
    )
    session = agent.new_session()
    result = asyncio.run(agent.run("go", session=session))
    first, second = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert not first.is_error
    assert second.is_error
    assert second.content.startswith("Error: only one todo item may be in_progress")
    assert [e.revision for e in result.events if isinstance(e, TodoUpdate)] == [1]
    snapshot = session.context.todo_store.snapshot()
    assert snapshot.revision == 1
    assert [i.status for i in snapshot.items] == ["in_progress", "pending", "pending"]


def test_todo_list_survives_between_runs_of_one_session(tmp_path):
    agent, _ = agent_for(
        tmp_path,
        [
            todo_call(PLAN),
            {"text": "planned"},
            todo_call(),
            {"text": "ok", "expect": {"last_message_contains": "- [pending] 3: Add a test"}},
        ],
    )
    session = agent.new_session()
    asyncio.run(agent.run("plan", session=session))
    result = asyncio.run(agent.run("what is left?", session=session))
    assert result.outcome == "completed", result.reason


def test_planning_toolset_is_off_for_a_session_without_a_todo_store(tmp_path):
    agent, _ = agent_for(tmp_path, [])
    session = agent.new_session(todo_store=None)
    assert "todo" not in session.tools
    assert "todo_store" in session.toolsets.decision("planning").reason
    assert "todo" in agent.new_session().tools
