"""What a session builds once instead of on every run or turn."""

import asyncio

from pydantic import BaseModel

import neta
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent

BUILT: list[str] = []


class CountedArgs(BaseModel):
    text: str = ""

    @classmethod
    def model_json_schema(cls, *args, **kwargs):
        BUILT.append(cls.__name__)
        return super().model_json_schema(*args, **kwargs)


class CountingPlugin:
    @neta.hookimpl
    def neta_toolsets(self):
        return [neta.ToolsetSpec(name="counted")]

    @neta.hookimpl
    def neta_tools(self):
        return [
            neta.ToolSchema(name="note", toolset="counted", description="Notes.", args=CountedArgs)
        ]

    @neta.hookimpl
    def neta_build_tools(self, session):
        return [neta.Tool(name="note", execute=lambda a: "noted")]


def test_tool_schemas_are_built_once_at_registration_not_per_session_run_or_turn(tmp_path):
    BUILT.clear()
    for _ in range(2):  # a second plugin manager, as a host or a test makes, builds none
        pm = neta.create_plugin_manager(
            load_entrypoints=False, plugins=[("counted", CountingPlugin())]
        )
        pm.catalog()  # registration checks each schema
    assert BUILT == ["CountedArgs"]  # no other test registers this model
    call = {"tool_calls": [{"name": "note", "arguments": {"text": "x"}}]}
    provider = ScriptedProvider([call, call, {"text": "one"}, call, {"text": "two"}])
    agent = Agent(provider=provider, plugin_manager=pm, workspace=tmp_path, toolsets=["counted"])
    for message in ("first", "second"):
        asyncio.run(agent.run(message, session=agent.new_session()))
    assert len(provider.received) == 5
    assert BUILT == ["CountedArgs"]
    assert all(r.tools == provider.received[0].tools for r in provider.received)


def test_the_system_prompt_is_built_once_per_session(tmp_path, monkeypatch):
    import neta.runtime.agent as agent_module

    built = []
    original = agent_module.build_system_prompt

    def counting(**kwargs):
        built.append(1)
        return original(**kwargs)

    monkeypatch.setattr(agent_module, "build_system_prompt", counting)
    provider = ScriptedProvider([{"text": "a"}, {"text": "b"}, {"text": "c"}])
    agent = Agent(provider=provider, workspace=tmp_path)
    session = agent.new_session()
    for message in "xyz":
        asyncio.run(agent.run(message, session=session))
    assert len(built) == 1
    assert len({r.messages[0].content for r in provider.received}) == 1
