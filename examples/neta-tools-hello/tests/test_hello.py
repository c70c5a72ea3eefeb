"""The example plugin, tested as its author would: as a function and through Neta."""

import asyncio

import neta
import neta_tools_hello
from neta_tools_hello import HelloArgs, hello


def test_hello_greets_by_name():
    assert hello(HelloArgs(name="Ada")) == "Hello, Ada!"


def test_hello_shouts_when_asked():
    assert hello(HelloArgs(name="Ada", shout=True)) == "HELLO, ADA!"


def test_hello_builds_and_runs_through_a_plugin_manager(tmp_path):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("hello", neta_tools_hello)])
    session = neta.SessionContext(workspace=tmp_path)
    tools = neta.build_session_tools(pm, session, ["hello"])
    args = pm.catalog().get("hello").args.model_validate({"name": "Grace"})
    result = asyncio.run(tools["hello"].tool.invoke(args))
    assert result.content == "Hello, Grace!"
    assert pm.problems == []


def test_hello_end_to_end_with_a_scripted_model(tmp_path):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("hello", neta_tools_hello)])
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
