"""Real third-party MCP servers over stdio (mcp-server-time, mcp-server-git) as Neta toolsets.

Starting a reference server costs about a second of CPU (it imports the MCP SDK), so the tests
that only read share one time server, session and run (``timed``), and the tests about any
server's toolset (not stdio's) are in ``test_toolset_rules.py``, on the in-test HTTP server.
"""

import asyncio
import json
import os
import signal
import sys
import time
from dataclasses import dataclass

import pytest

from neta.events import ToolResultEvent
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent, AgentSession, RunResult
from tests.plugins.mcp.conftest import TIME, git_server, marked, mcp_pm, server_processes


def agent_with(workspace, servers, turns=(), **options):
    provider = ScriptedProvider(list(turns)) if turns else None
    return Agent(
        provider=provider,
        plugin_manager=mcp_pm(),
        workspace=workspace,
        mcp_servers=servers,
        **options,
    )


def invoke(session, name, arguments):
    bound = session.tools[name]
    return asyncio.run(bound.tool.invoke(bound.schema.validate_arguments(arguments)))


@dataclass
class Timed:
    """One session with the time server, and the scripted run it made."""

    agent: Agent
    session: AgentSession
    result: RunResult


@pytest.fixture(scope="module")
def timed(tmp_path_factory):
    """A session with the time server, after a scripted run that called it twice."""
    root = tmp_path_factory.mktemp("timed")
    (root / "home").mkdir()
    (root / "workspace").mkdir()
    turns = [
        {"tool_calls": [{"name": "get_current_time", "arguments": {}}]},
        {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"text": "It is now.", "expect": {"last_message_contains": '"timezone": "UTC"'}},
    ]
    with pytest.MonkeyPatch.context() as env:
        env.setenv("NETA_HOME", str(root / "home"))
        agent = agent_with(root / "workspace", {"time": TIME}, turns)
        session = agent.new_session()
        try:
            result = asyncio.run(agent.run("What time is it in UTC?", session=session))
            yield Timed(agent, session, result)
        finally:
            agent.end_session(session)


def test_time_server_tools_join_the_catalog_with_their_json_schema(timed):
    catalog = timed.agent.pm.catalog()
    schema = catalog.get("get_current_time")
    assert schema.toolset == "mcp-time"
    assert schema.json_schema["required"] == ["timezone"]
    assert "IANA timezone" in schema.json_schema["properties"]["timezone"]["description"]
    assert "MCP server 'time'" in schema.when_to_use
    assert catalog.tool_names(["mcp-time"]) == ["get_current_time", "convert_time"]
    decision = timed.session.toolsets.decision("mcp-time")
    assert decision.enabled
    assert decision.reason == "on by default"


def test_a_scripted_run_calls_the_time_server_and_reads_its_answer(timed):
    result = timed.result
    assert result.outcome == "completed", result.reason
    first, second = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert first.is_error  # validated against the server's JSON Schema before any call
    assert "'timezone' is a required property" in first.content
    assert not second.is_error
    assert json.loads(second.content)["timezone"] == "UTC"
    assert second.data["structured"]["timezone"] == "UTC"


def test_git_server_reports_the_status_of_a_repository(workspace, git_repo):
    agent = agent_with(workspace, {"git": git_server(git_repo)})
    session = agent.new_session()
    try:
        assert "git_status" in session.tools
        result = invoke(session, "git_status", {"repo_path": str(git_repo)})
        assert not result.is_error, result.content
        assert "notes.txt" in result.content
    finally:
        agent.end_session(session)


def test_a_server_that_cannot_start_is_unavailable_with_the_reason(workspace, asking):
    broken = {"command": sys.executable, "args": ["-c", "import sys; sys.exit('no config')"]}
    servers = {"asker": {"url": asking.url}, "broken": broken}
    agent = agent_with(workspace, servers, toolsets=["mcp-broken"])
    session = agent.new_session()
    try:
        decision = session.toolsets.decision("mcp-broken")
        assert not decision.enabled
        assert decision.reason.startswith("the server did not start")
        assert "no config" in decision.reason  # the server's last words
        assert session.toolsets.decision("mcp-asker").enabled  # the others still start
    finally:
        agent.end_session(session)


def test_an_entry_with_enabled_false_is_off_and_never_started(workspace):
    agent = agent_with(workspace, {"time": {**marked(TIME, "off"), "enabled": False}})
    session = agent.new_session()
    try:
        decision = session.toolsets.decision("mcp-time")
        assert not decision.enabled
        assert '"enabled": false' in decision.reason
        assert server_processes("off") == []
    finally:
        agent.end_session(session)


def test_a_server_that_dies_mid_session_gives_an_error_result_then_restarts_and_stops(
    workspace,
):
    # one test for the server's whole life: each start of it costs about a second of CPU
    agent = agent_with(workspace, {"time": marked(TIME, "dies")})
    session = agent.new_session()
    try:
        invoke(session, "get_current_time", {"timezone": "UTC"})
        [pid] = server_processes("dies")  # the catalog's, adopted by the session: one start
        os.kill(pid, signal.SIGKILL)
        dead = invoke(session, "get_current_time", {"timezone": "UTC"})
        assert dead.is_error
        assert "MCP server 'time' is not running" in dead.content
        again = invoke(session, "get_current_time", {"timezone": "UTC"})
        assert not again.is_error, again.content
        [restarted] = server_processes("dies")
        assert restarted != pid
    finally:
        agent.end_session(session)
    # ending the session stops the server it runs
    deadline = time.monotonic() + 10
    while server_processes("dies") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server_processes("dies") == []
