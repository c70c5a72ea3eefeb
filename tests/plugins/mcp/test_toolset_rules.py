"""Neta's rules for any MCP server's toolset: deny, and a tool name another server took.

Nothing here depends on how a server is reached, so the servers are the in-test HTTP server
(it runs in this process and costs next to nothing to start), under one name or two.
"""

import asyncio

from neta.runtime.agent import Agent
from tests.plugins.mcp.conftest import mcp_pm


def agent_with(workspace, servers, **options):
    return Agent(provider=None, plugin_manager=mcp_pm(), workspace=workspace,
                 mcp_servers=servers, **options)  # fmt: skip


def invoke(session, name, arguments):
    bound = session.tools[name]
    return asyncio.run(bound.tool.invoke(bound.schema.validate_arguments(arguments)))


def test_deny_turns_a_server_toolset_off(workspace, asking):
    agent = agent_with(workspace, {"asker": {"url": asking.url}}, deny=["mcp-asker"])
    session = agent.new_session()
    try:
        assert session.toolsets.decision("mcp-asker").reason == "denied"
        assert "forecast" not in session.tools
    finally:
        agent.end_session(session)


def test_a_tool_name_another_server_took_gets_the_server_prefix(workspace, asking):
    agent = agent_with(workspace, {"asker": {"url": asking.url}, "copy": {"url": asking.url}})
    session = agent.new_session()
    try:
        assert {"forecast", "copy_forecast"} <= set(session.tools)
        assert session.tools["copy_forecast"].schema.toolset == "mcp-copy"
        result = invoke(session, "copy_forecast", {"city": "Oslo"})
        assert not result.is_error, result.content
        assert result.data["structured"] == {"city": "Oslo", "sky": "clear", "high": 21}
        assert agent.pm.problems == []
    finally:
        agent.end_session(session)
