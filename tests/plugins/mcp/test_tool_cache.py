"""A server's tool list is kept in NETA_HOME: a later catalog is built without starting it.

The server is ``counted_server`` (it logs each start and each call it gets); a test changes
its tools or version behind Neta's back by rewriting its state file. The first agent of a
test lists the tools by starting the server and fills the cache (``warm``).
"""

import asyncio
import json
import stat
from pathlib import Path

import pytest

from neta.runtime.agent import Agent
from tests.core.cli.cli_runner import neta_in_process
from tests.plugins.mcp import counted_server
from tests.plugins.mcp.conftest import mcp_pm, write_config
from tests.plugins.mcp.counted_server import ECHO, SHOUT, log, server_entry, write_state
from tests.services import neta_environ


@pytest.fixture
def state(tmp_path):
    """The state of a server with the tools ``echo`` (read-only) and ``shout``."""
    path = tmp_path / "server"
    write_state(path, [ECHO, SHOUT])
    return path


def agent_with(workspace, servers, **options):
    return Agent(provider=None, plugin_manager=mcp_pm(), workspace=workspace,
                 mcp_servers=servers, **options)  # fmt: skip


def warm(workspace, servers, **options):
    """A first agent's session (it starts the servers and caches their tools), ended."""
    agent = agent_with(workspace, servers, **options)
    agent.end_session(agent.new_session())


def invoke(session, name, arguments):
    bound = session.tools[name]
    return asyncio.run(bound.tool.invoke(bound.schema.validate_arguments(arguments)))


def starts(state):
    return log(state).count("STARTED")


def test_a_later_agent_builds_its_catalog_from_the_cache_without_starting_the_server(
    workspace, state
):
    warm(workspace, {"c": server_entry(state)})
    agent = agent_with(workspace, {"c": server_entry(state)})
    session = agent.new_session()
    try:
        assert list(session.tools) == ["echo", "shout"]
        assert session.tools["echo"].schema.effect == "reads"  # its annotations were kept
        assert session.tools["echo"].schema.json_schema["required"] == ["text"]
        assert session.toolsets.decision("mcp-c").enabled
    finally:
        agent.end_session(session)
    assert starts(state) == 1


def test_a_cached_server_starts_on_the_first_call_and_serves_every_later_one(workspace, state):
    warm(workspace, {"c": server_entry(state)})
    agent = agent_with(workspace, {"c": server_entry(state)})
    session = agent.new_session()
    try:
        assert starts(state) == 1  # not yet
        first = invoke(session, "echo", {"text": "hi"})
        assert not first.is_error, first.content
        assert json.loads(first.content) == {"text": "hi"}
        assert not invoke(session, "shout", {"text": "ho"}).is_error
    finally:
        agent.end_session(session)
    assert log(state) == ["STARTED", "STARTED", "CALLED echo", "CALLED shout"]


def test_a_tool_the_server_no_longer_has_is_a_clear_error_and_the_cache_is_refreshed(
    workspace, state
):
    warm(workspace, {"c": server_entry(state)})
    write_state(state, [ECHO])
    agent = agent_with(workspace, {"c": server_entry(state)})
    session = agent.new_session()
    try:
        gone = invoke(session, "shout", {"text": "ho"})
        assert gone.is_error
        assert "MCP server 'c' no longer has the tool 'shout'" in gone.content
        assert "the call was not made" in gone.content
        assert not invoke(session, "echo", {"text": "hi"}).is_error  # unchanged: it works
    finally:
        agent.end_session(session)
    assert "CALLED shout" not in log(state)
    again = agent_with(workspace, {"c": server_entry(state)})
    session = again.new_session()
    again.end_session(session)
    assert list(session.tools) == ["echo"]  # the refreshed cache...
    assert starts(state) == 2  # ...without starting the server again


def test_a_tool_whose_annotations_changed_is_not_called_until_it_is_listed_again(workspace, state):
    warm(workspace, {"c": server_entry(state)})
    write_state(state, [{**ECHO, "annotations": {"readOnlyHint": False}}, SHOUT])
    agent = agent_with(workspace, {"c": server_entry(state)})
    session = agent.new_session()
    try:
        assert session.tools["echo"].schema.effect == "reads"  # as cached
        changed = invoke(session, "echo", {"text": "hi"})
        assert changed.is_error
        assert "MCP server 'c' changed the tool 'echo'" in changed.content
    finally:
        agent.end_session(session)
    assert "CALLED echo" not in log(state)
    again = agent_with(workspace, {"c": server_entry(state)})
    session = again.new_session()
    again.end_session(session)
    assert session.tools["echo"].schema.effect is None  # it may change something now


def test_a_server_reporting_another_version_has_its_cache_entry_replaced(
    workspace, state, neta_home
):
    warm(workspace, {"c": server_entry(state)})
    write_state(state, [ECHO, SHOUT], version="2.0")
    agent = agent_with(workspace, {"c": server_entry(state)})
    session = agent.new_session()
    try:
        assert not invoke(session, "echo", {"text": "hi"}).is_error  # same tools: called
    finally:
        agent.end_session(session)
    [entry] = (neta_home / "mcp-tools").glob("*.json")
    assert json.loads(entry.read_text())["server"] == {"name": "counted", "version": "2.0"}


def test_another_entry_or_a_changed_script_is_not_taken_from_the_cache(workspace, state, tmp_path):
    script = tmp_path / "server.py"
    script.write_text(Path(counted_server.__file__).read_text())
    warm(workspace, {"c": server_entry(state, script)})
    warm(workspace, {"c": {**server_entry(state, script), "env": {"GREETING": "hello"}}})
    assert starts(state) == 2
    with script.open("a") as file:
        file.write("# a new release\n")
    warm(workspace, {"c": server_entry(state, script)})
    assert starts(state) == 3
    warm(workspace, {"c": server_entry(state, script)})
    assert starts(state) == 3  # the very same server: cached


def test_the_cache_is_private_and_keeps_no_environment_value(workspace, state, neta_home):
    entry = {**server_entry(state), "env": {"API_TOKEN": "s3cret-value"}}
    warm(workspace, {"c": entry})
    folder = neta_home / "mcp-tools"
    files = list(folder.iterdir())
    assert len(files) == 1
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert "s3cret-value" not in files[0].read_text()
    assert "API_TOKEN" not in files[0].read_text()


def test_a_denied_server_with_cached_tools_is_neither_started_nor_offered(workspace, state):
    warm(workspace, {"c": server_entry(state)})
    agent = agent_with(workspace, {"c": server_entry(state)}, deny=["mcp-c"])
    session = agent.new_session()
    agent.end_session(session)
    assert session.toolsets.decision("mcp-c").reason == "denied"
    assert "echo" not in session.tools
    assert starts(state) == 1


def test_an_untrusted_workspace_server_with_cached_tools_is_not_offered(workspace, state):
    write_config(workspace / ".neta" / "mcp.json", {"c": server_entry(state)})
    warm(workspace, {}, trust_workspace=True, sandbox="off")
    agent = agent_with(workspace, {}, trust_workspace=False, sandbox="off")
    session = agent.new_session()
    agent.end_session(session)
    assert "mcp-c" not in {spec.name for spec in agent.pm.toolset_specs()}
    assert "echo" not in session.tools
    assert starts(state) == 1


def neta(*args, cwd, home):
    return neta_in_process(*args, env=neta_environ(NETA_HOME=str(home)), cwd=cwd)


def test_runs_that_do_not_call_a_server_start_it_only_to_fill_the_cache(
    workspace, state, neta_home, tmp_path
):
    write_config(neta_home / "mcp.json", {"c": server_entry(state)})
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "Hi."}]}))
    for _ in range(3):
        done = neta("run", "hi", "-p", "scripted", "--script", str(script), "--json",
                    cwd=workspace, home=neta_home)  # fmt: skip
        assert done.returncode == 0, done.stderr
    assert starts(state) == 1
    listed = neta("tools", "list", "--json", cwd=workspace, home=neta_home)
    assert {row["name"] for row in json.loads(listed.stdout)} >= {"echo", "shout"}
    assert starts(state) == 1


def test_mcp_list_asks_each_server_and_refreshes_the_cache(workspace, state, neta_home):
    write_config(neta_home / "mcp.json", {"c": server_entry(state)})
    first = neta("tools", "list", "--json", cwd=workspace, home=neta_home)
    assert first.returncode == 0, first.stderr
    write_state(state, [ECHO])
    done = neta("mcp", "list", "--json", cwd=workspace, home=neta_home)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    assert row["tools"] == 1  # the server as it is now, not the cached two
    assert starts(state) == 2
    listed = neta("tools", "list", "--json", cwd=workspace, home=neta_home)
    assert "shout" not in {row["name"] for row in json.loads(listed.stdout)}
    assert starts(state) == 2
