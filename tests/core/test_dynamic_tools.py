"""What a plugin whose tools depend on the host's configuration gets from the core."""

import asyncio

from pydantic import BaseModel

import neta
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent


class NoArgs(BaseModel):
    pass


class Fixed:
    """A plugin with a plain tool called ``lookup``."""

    @neta.hookimpl
    def neta_toolsets(self):
        return [neta.ToolsetSpec(name="fixed")]

    @neta.hookimpl
    def neta_tools(self):
        return [neta.ToolSchema(name="lookup", toolset="fixed", description="d", args=NoArgs)]

    @neta.hookimpl
    def neta_build_tools(self, session):
        return [neta.Tool(name="lookup", execute=lambda a: "fixed lookup")]


class PerHost:
    """A plugin whose toolset and tool depend on the host (its workspace and options)."""

    def __init__(self):
        self.hosts = []

    @neta.hookimpl
    def neta_toolsets(self, host):
        self.hosts.append(host)
        down = host.options.get("down", "")
        return [neta.ToolsetSpec(name="remote", unavailable=down)]

    @neta.hookimpl
    def neta_tools(self, host):
        return [
            neta.ToolSchema(
                name="lookup",
                qualified_name="remote_lookup",
                toolset="remote",
                description=f"Look up in {host.workspace.name}.",
                json_schema={"type": "object"},
            )
        ]

    @neta.hookimpl
    def neta_build_tools(self, session, host):
        return [neta.Tool(name="lookup", execute=lambda a: f"remote lookup in {host.workspace}")]


def test_hooks_asking_for_host_get_the_workspace_and_options_the_agent_serves(tmp_path):
    plugin = PerHost()
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("remote", plugin)])
    Agent(provider=None, plugin_manager=pm, workspace=tmp_path, mcp_servers={"x": {"url": "u"}})
    pm.toolset_specs()
    [host] = plugin.hosts
    assert host is pm.host
    assert host.workspace == tmp_path.resolve()
    assert host.options == {"mcp_servers": {"x": {"url": "u"}}, "sandbox": neta.SandboxPolicy()}


def test_a_new_workspace_rebuilds_the_catalog_for_it(tmp_path):
    plugin = PerHost()
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("remote", plugin)])
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    Agent(provider=None, plugin_manager=pm, workspace=tmp_path / "one")
    assert pm.catalog().get("lookup").description == "Look up in one."
    Agent(provider=None, plugin_manager=pm, workspace=tmp_path / "one")
    assert len(plugin.hosts) == 1  # the same host: nothing rebuilt
    Agent(provider=None, plugin_manager=pm, workspace=tmp_path / "two")
    assert pm.catalog().get("lookup").description == "Look up in two."


def test_an_unavailable_toolset_is_off_with_its_reason_even_when_requested(tmp_path):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("remote", PerHost())])
    agent = Agent(provider=None, plugin_manager=pm, workspace=tmp_path, toolsets=["remote"])
    pm.configure_host(tmp_path, {"down": "server 'x' did not start: boom"})
    session = agent.new_session()
    decision = session.toolsets.decision("remote")
    assert not decision.enabled
    assert decision.reason == "server 'x' did not start: boom"
    assert "lookup" not in session.tools


def test_a_taken_name_falls_back_to_the_qualified_name_and_the_tool_runs_under_it(tmp_path):
    pm = neta.create_plugin_manager(
        load_entrypoints=False, plugins=[("remote", PerHost()), ("fixed", Fixed())]
    )
    catalog = pm.catalog()
    assert catalog.plugin_of("lookup") == "fixed"  # the plain tool keeps its name
    assert catalog.plugin_of("remote_lookup") == "remote"
    assert catalog.registered_name("remote", "lookup") == "remote_lookup"
    turns = [
        {"tool_calls": [{"name": "remote_lookup", "arguments": {}}, {"name": "lookup"}]},
        {"text": "ok"},
    ]
    agent = Agent(
        permissions="auto", provider=ScriptedProvider(turns), plugin_manager=pm, workspace=tmp_path
    )
    result = asyncio.run(agent.run("go"))
    tool_messages = [m.content for m in result.messages if m.role == "tool"]
    assert tool_messages == [f"remote lookup in {tmp_path.resolve()}", "fixed lookup"]
    assert pm.problems == []
