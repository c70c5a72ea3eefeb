"""Which configured MCP servers start: only those whose toolset a session may get.

The server ``x`` only writes a line to a marker file when it starts (it never speaks MCP and
gives up after a second), so an empty marker proves it never started. The in-test HTTP
server ``asker`` is the server a session does get: it still works.
"""

import json

import pytest

from neta.runtime.agent import Agent
from tests.core.cli.cli_runner import neta_in_process
from tests.plugins.mcp.conftest import mcp_pm, write_config
from tests.services import neta_environ


@pytest.fixture
def marker(tmp_path):
    return tmp_path / "started.txt"


@pytest.fixture
def servers(marker, asking):
    """``x`` (writes the marker when started) and ``asker`` (the in-test HTTP server)."""
    starts = {"command": "sh", "args": ["-c", f"echo STARTED >> {marker}; sleep 30"]}
    return {"x": {**starts, "timeout": 1}, "asker": {"url": asking.url}}


@pytest.fixture
def home_config(neta_home, servers):
    """The servers in the user's own ``NETA_HOME/mcp.json``."""
    return write_config(neta_home / "mcp.json", servers)


def started(marker):
    return marker.read_text().count("STARTED") if marker.exists() else 0


def neta(*args, cwd, home):
    return neta_in_process(*args, env=neta_environ(NETA_HOME=str(home)), cwd=cwd)


def test_an_agent_denying_a_server_toolset_never_starts_that_server(workspace, servers, marker):
    agent = Agent(provider=None, plugin_manager=mcp_pm(), workspace=workspace,
                  mcp_servers=servers, deny=["mcp-x"])  # fmt: skip
    session = agent.new_session()
    try:
        assert session.toolsets.decision("mcp-x").reason == "denied"
        assert "forecast" in session.tools  # the server it may use still works
    finally:
        agent.end_session(session)
    assert started(marker) == 0


def test_an_agent_with_a_preset_starts_only_the_servers_in_it(workspace, servers, marker):
    agent = Agent(provider=None, plugin_manager=mcp_pm(), workspace=workspace,
                  mcp_servers=servers, preset=["mcp-asker"])  # fmt: skip
    session = agent.new_session()
    try:
        assert session.toolsets.decision("mcp-x").reason == "not in preset"
        assert session.toolsets.enabled == ("mcp-asker",)
    finally:
        agent.end_session(session)
    assert started(marker) == 0


def test_an_agent_requesting_a_server_beyond_its_preset_starts_it(workspace, servers, marker):
    agent = Agent(provider=None, plugin_manager=mcp_pm(), workspace=workspace,
                  mcp_servers=servers, preset=["mcp-asker"], toolsets=["mcp-x"])  # fmt: skip
    session = agent.new_session()
    agent.end_session(session)
    assert started(marker) == 1  # asked for: it started (and failed, being no MCP server)
    assert "did not start" in session.toolsets.decision("mcp-x").reason


def test_tools_list_denying_a_server_does_not_start_it(home_config, workspace, neta_home, marker):
    done = neta("tools", "list", "--deny", "mcp-x", "--json", cwd=workspace, home=neta_home)
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["forecast"]["enabled"] is True
    assert started(marker) == 0


def test_toolsets_denying_a_server_does_not_start_it(home_config, workspace, neta_home, marker):
    done = neta("toolsets", "--deny", "mcp-x", "--json", cwd=workspace, home=neta_home)
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["mcp-x"]["reason"] == "denied"
    assert rows["mcp-asker"]["enabled"] is True
    assert started(marker) == 0


def test_a_run_with_only_base_starts_no_server(home_config, workspace, neta_home, marker, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "Done."}]}))
    done = neta(
        "run", "hello", "-p", "scripted", "--script", str(script), "--only", "base", "--json",
        cwd=workspace, home=neta_home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["text"] == "Done."
    assert started(marker) == 0
