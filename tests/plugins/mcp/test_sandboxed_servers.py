"""A workspace's stdio MCP servers run in the host's sandbox; the user's own run as configured."""

import asyncio
import json
import secrets
import sys
from pathlib import Path

import pytest

from neta.runtime.agent import Agent
from tests.plugins.mcp.conftest import mcp_pm, write_config
from tests.processes import running_with
from tests.services import listening_port, require_sandbox

SECRET = "s3cr3t-" + secrets.token_hex(8)

PROBE_SERVER = """
import json, os, socket, sys
from mcp.server.mcpserver import MCPServer

server = MCPServer("probe")


@server.tool()
def probe(path: str, port: int) -> str:
    \"\"\"Say what this server can see: a file, a port, its environment, outside writes.\"\"\"
    seen = {"environ": dict(os.environ)}
    try:
        seen["file"] = open(path).read()
    except OSError as exc:
        seen["file"] = f"refused: {exc.strerror}"
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        seen["port"] = "connected"
    except OSError as exc:
        seen["port"] = f"refused: {exc.strerror}"
    try:
        open(os.environ["PROBE_OUTSIDE"], "w").close()
        seen["outside"] = "written"
    except OSError as exc:
        seen["outside"] = f"refused: {exc.strerror}"
    return json.dumps(seen)


server.run("stdio")
"""


@pytest.fixture(autouse=True)
def sandbox_here():
    """bubblewrap, or a skip (a failure under ``NETA_REQUIRE_SERVICES=1``) saying why."""
    require_sandbox()


@pytest.fixture
def probe_setup(tmp_path, neta_home, workspace, monkeypatch):
    """The probe server's script in the workspace, and a secret file and port outside it."""
    (workspace / "probe_server.py").write_text(PROBE_SERVER)
    secret_file = neta_home / "neta.db"
    secret_file.write_text(SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with listening_port() as port:
        yield {"secret_file": secret_file, "port": port}


def probe_entry(workspace, tmp_path, **extra):
    return {
        "command": sys.executable,
        "args": [str(workspace / "probe_server.py")],
        "env": {"PROBE_OUTSIDE": str(tmp_path / "outside")},
        **extra,
    }


def trusting(workspace, **options):
    """An agent for ``workspace`` whose own configuration the user trusts."""
    return Agent(
        provider=None,
        plugin_manager=mcp_pm(),
        workspace=workspace,
        trust_workspace=True,
        **options,
    )


def call_probe(workspace, setup, **agent_options):
    agent = trusting(workspace, **agent_options)
    session = agent.new_session()
    try:
        bound = session.tools["probe"]
        arguments = {"path": str(setup["secret_file"]), "port": setup["port"]}
        result = asyncio.run(bound.tool.invoke(bound.schema.validate_arguments(arguments)))
    finally:
        agent.end_session(session)
    assert not result.is_error, result.content
    return json.loads(result.content)


def test_a_workspace_server_cannot_read_neta_home_reach_a_port_or_write_outside(
    probe_setup, workspace, neta_home, tmp_path
):
    write_config(workspace / ".neta" / "mcp.json", {"probe": probe_entry(workspace, tmp_path)})
    seen = call_probe(workspace, probe_setup)
    assert seen["file"].startswith("refused")
    assert seen["port"].startswith("refused")
    assert not (tmp_path / "outside").exists()  # written, if at all, in the sandbox's own tmpfs
    assert SECRET not in json.dumps(seen["environ"])
    assert not any(name.startswith("NETA_") for name in seen["environ"])


def test_a_workspace_server_cannot_widen_the_hosts_sandbox_to_the_network(
    probe_setup, workspace, tmp_path
):
    entry = probe_entry(workspace, tmp_path, sandbox={"network": True})
    write_config(workspace / ".neta" / "mcp.json", {"probe": entry})
    seen = call_probe(workspace, probe_setup)
    assert seen["port"].startswith("refused")


def test_a_workspace_server_gets_the_network_the_host_allows_unless_it_narrows_it(
    probe_setup, workspace, tmp_path
):
    write_config(workspace / ".neta" / "mcp.json", {"probe": probe_entry(workspace, tmp_path)})
    seen = call_probe(workspace, probe_setup, sandbox={"network": True})
    assert seen["port"] == "connected"
    assert seen["file"].startswith("refused")
    entry = probe_entry(workspace, tmp_path, sandbox={"network": False})
    write_config(workspace / ".neta" / "mcp.json", {"probe": entry})
    seen = call_probe(workspace, probe_setup, sandbox={"network": True})
    assert seen["port"].startswith("refused")


def test_a_workspace_servers_own_variables_reach_it_but_never_bwrap(
    probe_setup, workspace, tmp_path
):
    # a variable such as LD_PRELOAD given to bwrap itself would run before any confinement
    entry = probe_entry(workspace, tmp_path)
    entry["env"]["PROBE_MARK"] = "set-inside-only"
    write_config(workspace / ".neta" / "mcp.json", {"probe": entry})
    agent = trusting(workspace)
    session = agent.new_session()
    try:
        bound = session.tools["probe"]
        arguments = {"path": "/nonexistent", "port": probe_setup["port"]}
        seen = json.loads(
            asyncio.run(bound.tool.invoke(bound.schema.validate_arguments(arguments))).content
        )
        launchers = [pid for pid in running_with("probe_server.py") if comm(pid) in ("bwrap", "sh")]
        assert launchers
        for pid in launchers:
            assert b"PROBE_MARK" not in Path(f"/proc/{pid}/environ").read_bytes()
    finally:
        agent.end_session(session)
    assert seen["environ"]["PROBE_MARK"] == "set-inside-only"


def comm(pid):
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def test_a_workspace_server_cannot_turn_the_sandbox_off(probe_setup, workspace, tmp_path):
    entry = probe_entry(workspace, tmp_path, sandbox=False)
    write_config(workspace / ".neta" / "mcp.json", {"probe": entry})
    agent = trusting(workspace)
    session = agent.new_session()
    try:
        assert "probe" not in session.tools
        decision = session.toolsets.decision("mcp-probe")
        assert not decision.enabled
        assert "always runs in the host's sandbox" in decision.reason
    finally:
        agent.end_session(session)
    assert not (tmp_path / "outside").exists()


def test_the_hosts_sandbox_off_runs_a_workspace_server_unconfined(probe_setup, workspace, tmp_path):
    write_config(workspace / ".neta" / "mcp.json", {"probe": probe_entry(workspace, tmp_path)})
    seen = call_probe(workspace, probe_setup, sandbox="off")
    assert seen["file"] == SECRET
    assert seen["outside"] == "written"


def test_the_users_own_server_runs_as_configured(probe_setup, workspace, neta_home, tmp_path):
    write_config(neta_home / "mcp.json", {"probe": probe_entry(workspace, tmp_path)})
    seen = call_probe(workspace, probe_setup)
    assert seen["port"] == "connected"
    assert seen["outside"] == "written"


def test_the_users_own_server_may_ask_for_the_sandbox(probe_setup, workspace, neta_home, tmp_path):
    entry = probe_entry(workspace, tmp_path, sandbox=True)
    write_config(neta_home / "mcp.json", {"probe": entry})
    seen = call_probe(workspace, probe_setup)
    assert seen["port"].startswith("refused")
    assert not (tmp_path / "outside").exists()


FORKING_SERVER = """
import os, time
from mcp.server.mcpserver import MCPServer

server = MCPServer("forker")


@server.tool()
def fork_many() -> str:
    \"\"\"Start sleeping children until the system refuses one; say how many started.\"\"\"
    started = 0
    while started < 2000:
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(5)
            os._exit(0)
        started += 1
    return str(started)


server.run("stdio")
"""


def test_a_workspace_servers_processes_are_bounded_as_a_commands_are(workspace, tmp_path):
    # as root the kernel ignores the process limit: the server runs in a pids group too
    (workspace / "forking_server.py").write_text(FORKING_SERVER)
    entry = {"command": sys.executable, "args": [str(workspace / "forking_server.py")]}
    write_config(workspace / ".neta" / "mcp.json", {"forker": entry})
    limited = {"limits": {"processes": 40}}
    agent = trusting(workspace, sandbox=limited)
    session = agent.new_session()
    try:
        bound = session.tools["fork_many"]
        result = asyncio.run(bound.tool.invoke(bound.schema.validate_arguments({})))
    finally:
        agent.end_session(session)
    assert not result.is_error, result.content
    assert int(result.content) < 40
