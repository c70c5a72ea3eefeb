"""Testing a plugin: a tool as a function, as Neta builds it for a session, and end to end."""

import asyncio

import pytest

import neta
import neta_tools_hello
from neta_tools_hello import HelloArgs, hello


def test_hello_greets_by_name():
    assert hello(HelloArgs(name="Ada", shout=True)) == "HELLO, ADA!"


@pytest.fixture
def pm():
    """A plugin manager holding only this plugin, whatever else is installed."""
    manager = neta.create_plugin_manager(
        load_entrypoints=False, plugins=[("hello", neta_tools_hello)]
    )
    yield manager
    assert manager.problems == []


def call(tools, name, **arguments):
    """Call a built tool as the runtime does: validate the arguments, then invoke it."""
    bound = tools[name]
    args = bound.schema.args.model_validate(arguments)
    return asyncio.run(bound.tool.invoke(args))


def test_hello_file_greets_everyone_listed_in_a_workspace_file(pm, tmp_path):
    (tmp_path / "team.txt").write_text("Ada\n\nGrace\n")
    tools = neta.build_session_tools(pm, neta.SessionContext(workspace=tmp_path), ["hello"])
    assert call(tools, "hello_file", path="team.txt").content == "Hello, Ada!\nHello, Grace!"


def test_hello_file_refuses_a_path_outside_the_workspace(pm, tmp_path):
    tools = neta.build_session_tools(pm, neta.SessionContext(workspace=tmp_path), ["hello"])
    with pytest.raises(neta.WorkspaceError):
        call(tools, "hello_file", path="../../etc/passwd")
    (tmp_path / "empty.txt").write_text("\n")
    with pytest.raises(neta.ToolError, match="lists nobody"):
        call(tools, "hello_file", path="empty.txt")


def test_hello_end_to_end_with_a_scripted_model(pm, tmp_path):
    model = neta.ScriptedProvider(
        [
            {
                "tool_calls": [{"name": "hello", "arguments": {"name": "Ada"}}],
                "expect": {"tools_include": ["hello"], "system_includes": ["use hello"]},
            },
            {"text": "Greeted.", "expect": {"last_message_contains": "Hello, Ada!"}},
        ]
    )
    agent = neta.Agent(provider=model, plugin_manager=pm, toolsets=["hello"], workspace=tmp_path)
    result = asyncio.run(agent.run("greet Ada"))
    assert result.outcome == "completed", result.reason
    assert result.text == "Greeted."
