"""What a session builds once instead of on every run or turn."""

import asyncio

from pydantic import BaseModel

import neta
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent


def counting_plugin(built: list[str]) -> object:
    """A plugin with one tool whose argument model records each JSON schema made of it (a new
    model each time: one made before would already be in the process's schema cache)."""

    class CountedArgs(BaseModel):
        text: str = ""

        @classmethod
        def model_json_schema(cls, *args, **kwargs):
            built.append(cls.__name__)
            return super().model_json_schema(*args, **kwargs)

    class CountingPlugin:
        @neta.hookimpl
        def neta_toolsets(self):
            return [neta.ToolsetSpec(name="counted")]

        @neta.hookimpl
        def neta_tools(self):
            schema = neta.ToolSchema(
                name="note", toolset="counted", description="Notes.", args=CountedArgs
            )
            return [schema]

        @neta.hookimpl
        def neta_build_tools(self, session):
            return [neta.Tool(name="note", execute=lambda a: "noted")]

    return CountingPlugin()


def test_tool_schemas_are_built_once_at_registration_not_per_session_run_or_turn(
    tmp_path, monkeypatch
):
    built: list[str] = []
    plugin = counting_plugin(built)
    for _ in range(2):  # a second plugin manager, as a host or a test makes, builds none
        pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("counted", plugin)])
        pm.catalog()  # registration checks each schema
    assert built == ["CountedArgs"]
    exported = []  # the tool definitions sent to the model: made once per session
    export = neta.ToolSchema.openai_tool

    def counted(schema, *args, **kwargs):
        exported.append(schema.name)
        return export(schema, *args, **kwargs)

    monkeypatch.setattr(neta.ToolSchema, "openai_tool", counted)
    call = {"tool_calls": [{"name": "note", "arguments": {"text": "x"}}]}
    provider = ScriptedProvider([call, call, {"text": "one"}, call, {"text": "two"}])
    agent = Agent(provider=provider, plugin_manager=pm, workspace=tmp_path, toolsets=["counted"])
    session = agent.new_session()
    for message in ("first", "second"):
        asyncio.run(agent.run(message, session=session))
    assert len(provider.received) == 5
    assert exported == ["note"]
    assert built == ["CountedArgs"]
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
