"""The MCP client through the command line: tools list/call, a scripted run, mcp list.

Most use the in-test HTTP server (it runs in this process: next to nothing to start); the run
uses the reference time server, a real process.
"""

import json
import sys

import pytest

from neta.trust import TrustStore
from tests.core.cli.cli_runner import neta_in_process
from tests.plugins.mcp.conftest import TIME, write_config
from tests.services import neta_environ, require_sandbox


@pytest.fixture
def project(workspace, neta_home, asking):
    """A workspace whose .neta/mcp.json has the in-test server (and a broken one in NETA_HOME)."""
    write_config(workspace / ".neta" / "mcp.json", {"asker": {"url": asking.url}})
    write_config(
        neta_home / "mcp.json",
        {"asker": {"command": "/nonexistent/asker"}, "broken": {"command": "/nonexistent/x"}},
    )
    TrustStore(neta_home).trust(workspace)  # its user trusts it (test_trust: one not trusted)
    return workspace


@pytest.fixture
def time_project(workspace, neta_home):
    """A trusted workspace whose .neta/mcp.json has the reference time server."""
    write_config(workspace / ".neta" / "mcp.json", {"time": TIME})
    TrustStore(neta_home).trust(workspace)
    return workspace


def neta(*args, cwd, home):
    """``neta ARGS`` in-process (a stdio MCP server it starts is a real process all the same)."""
    return neta_in_process(*args, env=neta_environ(NETA_HOME=str(home)), cwd=cwd)


def test_tools_list_shows_the_server_tools_in_their_toolset(project, neta_home):
    done = neta("tools", "list", "--json", cwd=project, home=neta_home)
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["forecast"]["toolset"] == "mcp-asker"
    assert rows["forecast"]["plugin"] == "mcp"
    assert rows["forecast"]["enabled"] is True


def test_tools_call_runs_a_server_tool(project, neta_home, tmp_path):
    args = json.dumps({"city": "Oslo"})
    done = neta(
        "tools", "call", "forecast", "--args", args, "-w", str(project),
        cwd=tmp_path, home=neta_home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"city": "Oslo", "sky": "clear", "high": 21}


def test_a_scripted_run_calls_the_time_server(time_project, neta_home, tmp_path):
    require_sandbox()  # its bash call runs in the default sandbox
    script = tmp_path / "script.json"
    turns = [
        {"tool_calls": [{"name": "convert_time", "arguments": {
            "source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}}]},
        {"text": "Noon in UTC is 21:00 in Tokyo.",
         "expect": {"last_message_contains": "21:00"}},
    ]  # fmt: skip
    script.write_text(json.dumps({"turns": turns}))
    done = neta(
        "run", "noon UTC in Tokyo?", "-p", "scripted", "--script", str(script),
        "-w", str(time_project), "--json", cwd=tmp_path, home=neta_home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["outcome"] == "completed"
    assert data["text"] == "Noon in UTC is 21:00 in Tokyo."


def test_mcp_list_shows_each_server_its_state_reason_and_tool_count(project, neta_home):
    done = neta("mcp", "list", "--json", cwd=project, home=neta_home)
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["asker"]["enabled"] is True  # the workspace's entry won over the home one
    assert rows["asker"]["source"] == str(project / ".neta" / "mcp.json")
    assert rows["asker"]["tools"] == 7
    assert rows["broken"]["enabled"] is False
    assert rows["broken"]["reason"].startswith("the server did not start")
    assert rows["broken"]["tools"] == 0


TERMINAL_TRICKS = "\x1b]0;PWNED\x1b\\\x1b[31mRED\x9b2J\u202eexe.txt"
"""A window title, a colour, a C1 clear screen and a right-to-left override."""


def test_mcp_list_shows_a_failed_server_output_without_its_terminal_escapes(workspace, neta_home):
    speaks = f"import sys; sys.stderr.write({TERMINAL_TRICKS!r}); sys.exit(1)"
    write_config(
        neta_home / "mcp.json", {"tricky": {"command": sys.executable, "args": ["-c", speaks]}}
    )
    done = neta("mcp", "list", cwd=workspace, home=neta_home)
    assert done.returncode == 0, done.stderr
    shown = done.stdout.encode()
    assert b"\x1b" not in shown
    assert b"\x9b" not in shown
    assert "\u202e" not in done.stdout
    assert "PWNED" in done.stdout  # the output is shown, as visible escapes


def test_toolsets_shows_a_server_that_did_not_start_and_why(project, neta_home):
    done = neta("toolsets", "--json", cwd=project, home=neta_home)
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["mcp-asker"]["enabled"] is True
    assert rows["mcp-broken"]["enabled"] is False
    assert "/nonexistent/x" in rows["mcp-broken"]["reason"]


def test_a_broken_mcp_json_is_a_toolset_that_says_where_not_a_crash(workspace, neta_home):
    (neta_home / "mcp.json").write_text("{not json")
    done = neta("toolsets", "--json", cwd=workspace, home=neta_home)
    assert done.returncode == 0, done.stderr
    [row] = [row for row in json.loads(done.stdout) if row["name"] == "mcp-config"]
    assert not row["enabled"]
    assert f"{neta_home / 'mcp.json'}:1:2: cannot read MCP servers" in row["reason"]


def test_a_broken_workspace_mcp_json_leaves_the_home_servers_listed_and_working(
    workspace, neta_home, asking
):
    write_config(neta_home / "mcp.json", {"asker": {"url": asking.url}})
    (workspace / ".neta").mkdir(exist_ok=True)
    (workspace / ".neta" / "mcp.json").write_text('{"mcpServers": {\n  "x": {"command": }\n}}')
    TrustStore(neta_home).trust(workspace)
    listed = neta("mcp", "list", cwd=workspace, home=neta_home)
    assert listed.returncode == 1
    assert "asker" in listed.stdout  # the home file's server is still there
    where = workspace / ".neta" / "mcp.json"
    assert f"Error: {where}:2:20: cannot read MCP servers: Expecting value" in listed.stderr
    tools = neta("tools", "list", cwd=workspace, home=neta_home)
    assert "mcp-asker" in tools.stdout  # and its tools are offered
