"""The session context: typed capabilities, the clarify timeout as a field, no ``Any`` anywhere."""

import ast
import asyncio
import datetime as dt
import inspect
import math
import typing
from pathlib import Path

import pytest

import neta
from neta import crew, memory, session, todos

ROOT = Path(neta.__file__).parent


def hints_of(cls):
    names = {name: getattr(neta, name) for name in neta.__all__}
    return typing.get_type_hints(cls, localns=names, include_extras=True)


def test_capabilities_are_typed_with_their_protocols():
    hints = hints_of(neta.SessionContext)
    assert hints["todo_store"] == todos.TodoStore | None
    assert hints["crew_runner"] == crew.SubAgentRunner | None
    assert hints["memory_store"] == memory.MemoryStore | None
    assert hints["clarify_timeout"] == float | None
    assert hints["emit"] == session.EventSink


def test_the_protocols_are_public_and_runtime_checkable():
    class Notes:
        def save(self, content, tags=()):
            return neta.Memory(1, content, tuple(tags), dt.datetime.now(dt.UTC))

        def recall(self, query, limit=5):
            return []

        def forget(self, memory_id):
            return None

    assert isinstance(Notes(), neta.MemoryStore)
    assert not isinstance(object(), neta.MemoryStore)
    assert isinstance(todos.InMemoryTodoStore(), neta.TodoStore)
    assert neta.SubAgentRunner is crew.SubAgentRunner


def test_event_sink_takes_the_runtime_events():
    [event_type] = typing.get_args(session.EventSink)[0]
    assert event_type == neta.Event


def test_clarify_timeout_is_a_field_defaulting_to_none(tmp_path):
    assert neta.SessionContext(workspace=tmp_path).clarify_timeout is None
    context = neta.SessionContext(workspace=tmp_path, clarify_timeout=2)
    assert context.clarify_timeout == 2.0
    assert "clarify_timeout" not in context.capabilities


@pytest.mark.parametrize("bad", [0, -1, math.inf, math.nan, True, "20"])
def test_bad_clarify_timeout_is_a_config_error(tmp_path, bad):
    with pytest.raises(neta.ConfigError, match="clarify_timeout"):
        neta.SessionContext(workspace=tmp_path, clarify_timeout=bad)


@pytest.mark.parametrize("field", ["clarify_timeout", "memory_store", "depth"])
def test_an_extras_key_naming_a_field_is_a_config_error(tmp_path, field):
    with pytest.raises(neta.ConfigError, match=f"{field}=") as caught:
        neta.SessionContext(workspace=tmp_path, extras={field: 5})
    assert "is a SessionContext field" in str(caught.value)


def annotations_naming_any(path: Path, *, public_only: bool) -> list[str]:
    """Where the module at ``path`` uses ``Any`` in an annotation (of a public name)."""
    tree = ast.parse(path.read_text())
    found = []

    def uses_any(annotation):
        """Whether ``annotation`` names ``Any`` (inside a quoted forward reference too)."""
        if annotation is None:
            return False
        for n in ast.walk(annotation):
            if (isinstance(n, ast.Name) and n.id == "Any") or (
                isinstance(n, ast.Attribute) and n.attr == "Any"
            ):
                return True
            if isinstance(n, ast.Constant) and isinstance(n.value, str):
                try:
                    quoted = ast.parse(n.value, mode="eval")
                except SyntaxError:
                    continue
                if uses_any(quoted):
                    return True
        return False

    def visit(body, owner=""):
        for node in body:
            name = getattr(node, "name", "")
            dunder = name.startswith("__") and name.endswith("__")
            if public_only and name.startswith("_") and not dunder:
                continue
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{owner}{name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                arguments = node.args
                every = [
                    *arguments.posonlyargs,
                    *arguments.args,
                    *arguments.kwonlyargs,
                    arguments.vararg,
                    arguments.kwarg,
                ]
                for argument in every:
                    if argument is not None and uses_any(argument.annotation):
                        found.append(f"{path.name}:{owner}{name}({argument.arg})")
                if uses_any(node.returns):
                    found.append(f"{path.name}:{owner}{name} returns")
            elif isinstance(node, ast.AnnAssign) and uses_any(node.annotation):
                found.append(f"{path.name}:{owner}{ast.unparse(node.target)}")
            elif isinstance(node, ast.Assign) and uses_any(node.value) and owner == "":
                found.append(f"{path.name}:{ast.unparse(node.targets[0])}")

    visit(tree.body)
    return found


def test_session_and_hookspecs_use_no_any():
    for module in ("session.py", "hookspecs.py"):
        tree = ast.parse((ROOT / module).read_text())
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        imported = {
            alias.asname or alias.name
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom)
            for alias in n.names
        }
        assert "Any" not in names | imported, module


def test_the_runtimes_public_signatures_use_no_any():
    runtime = [
        *sorted((ROOT / "runtime").glob("*.py")),
        ROOT / "events.py",
        ROOT / "crew.py",
        ROOT / "todos.py",
        ROOT / "memory.py",
    ]
    found = [where for path in runtime for where in annotations_naming_any(path, public_only=True)]
    assert found == []


def test_run_result_events_are_typed_events():
    hints = hints_of(neta.RunResult)
    assert hints["events"] == list[neta.Event]


def test_new_session_capabilities_are_typed_keywords():
    [capabilities] = [
        p
        for p in inspect.signature(neta.Agent.new_session).parameters.values()
        if p.kind is p.VAR_KEYWORD
    ]
    assert "Unpack[SessionCapabilities]" in str(capabilities.annotation)
    assert set(typing.get_type_hints(session.SessionCapabilities)) >= {
        "todo_store",
        "crew_runner",
        "memory_store",
        "clarify_timeout",
        "user_channel",
        "depth",
        "extras",
    }


def test_hub_gives_gateway_sessions_a_clarify_timeout_field_past_its_own_deadline(tmp_path):
    from neta.hosting import hub as hosting_hub

    async def scenario():
        config = hosting_hub.HostConfig(
            provider_factory=lambda: neta.ScriptedProvider([]),
            home=tmp_path / "home",
            workspace=tmp_path,
            plugin_manager=neta.create_plugin_manager(load_entrypoints=False),
            clarify_timeout=7.0,
        )
        host = hosting_hub.SessionHub(config)
        live = await host.create("gateway")
        context = live.session.context
        await host.shutdown()
        return context

    context = asyncio.run(scenario())
    assert "clarify_timeout" not in context.extras
    assert context.clarify_timeout == 7.0 + hosting_hub.QUESTION_DEADLINE_MARGIN
    assert hosting_hub.QUESTION_DEADLINE_MARGIN > 0
