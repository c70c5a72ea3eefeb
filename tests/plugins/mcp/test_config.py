"""Which servers a host has: NETA_HOME/mcp.json, the workspace's .neta/mcp.json, the host's list."""

import pytest

import neta
from neta_mcp.config import load_servers
from neta_mcp.naming import qualified_tool_name, tool_name, toolset_name
from tests.plugins.mcp.conftest import write_config


def test_the_workspace_entry_wins_over_the_home_entry_of_the_same_name(workspace, neta_home):
    write_config(neta_home / "mcp.json", {"a": {"command": "home-a"}, "b": {"url": "http://b"}})
    write_config(workspace / ".neta" / "mcp.json", {"a": {"command": "ws-a", "args": ["-x"]}})
    servers = load_servers(neta.HostSettings(workspace, {"trust_workspace": True}))
    assert servers["a"].config.summary() == "ws-a -x"
    assert servers["a"].source == str(workspace / ".neta" / "mcp.json")
    assert servers["b"].config.transport == "http"


def test_an_untrusted_workspace_file_is_not_read(workspace, neta_home):
    write_config(neta_home / "mcp.json", {"b": {"url": "http://b"}})
    write_config(workspace / ".neta" / "mcp.json", {"a": {"command": "ws-a"}})
    assert list(load_servers(neta.HostSettings(workspace))) == ["b"]
    assert list(load_servers(neta.HostSettings(workspace, {"trust_workspace": False}))) == ["b"]


def test_the_host_list_wins_over_both_files(workspace, neta_home):
    write_config(workspace / ".neta" / "mcp.json", {"a": {"command": "ws-a"}})
    host = neta.HostSettings(workspace, {"mcp_servers": {"a": {"url": "http://host"}}})
    [server] = load_servers(host).values()
    assert server.config.url == "http://host"
    assert server.source == "the host (mcp_servers)"


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ({}, 'exactly one of "command"'),
        ({"command": "x", "url": "http://y"}, 'exactly one of "command"'),
        ({"command": "x", "args": "not a list"}, "args"),
    ],
)
def test_a_malformed_entry_is_kept_with_the_reason(workspace, neta_home, entry, why):
    write_config(neta_home / "mcp.json", {"bad": entry})
    [server] = load_servers(neta.HostSettings(workspace)).values()
    assert server.config is None
    assert why in server.error
    assert str(neta_home / "mcp.json") in server.error


def test_a_file_that_is_not_an_mcp_servers_object_is_a_config_error(workspace, neta_home):
    (neta_home / "mcp.json").write_text('{"mcpServers": []}')
    with pytest.raises(neta.ConfigError, match="mcpServers"):
        load_servers(neta.HostSettings(workspace))


def test_names_fit_the_toolset_and_tool_name_rules():
    assert toolset_name("time") == "mcp-time"
    assert toolset_name("my server.v2") == "mcp-my_server_v2"
    assert tool_name("files/read.text") == "files_read_text"
    assert qualified_tool_name("gh", "search") == "gh_search"
    assert len(tool_name("x" * 100)) == 64
