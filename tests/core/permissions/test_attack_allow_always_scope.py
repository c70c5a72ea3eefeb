""" "Allow always" for an MCP server's tool keeps a rule naming the server's toolset too.

A rule naming the bare tool (``delete_all``) would allow a tool of that name from any other
server, e.g. after the person adds server ``prod``, whose ``delete_all`` then takes the name.
"""

from neta.permissions import ApprovalStore, Policy, allow_rules_for


def test_allow_always_for_one_servers_tool_does_not_allow_another_servers(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    kept = allow_rules_for("delete_all", {"confirm": True}, workspace, "mcp-docs")
    assert kept == ("mcp-docs.delete_all",)
    store = ApprovalStore(tmp_path / "home")
    for rule in kept:
        store.add(workspace, rule)
    policy = Policy.from_sources([store.rules(workspace)])
    asked_for = policy.decide(
        "delete_all", toolset="mcp-docs", effect="runs", arguments={}, workspace=workspace
    )
    assert asked_for.action == "allow"  # the tool the person approved
    other = policy.decide(
        "delete_all", toolset="mcp-prod", effect="runs", arguments={}, workspace=workspace
    )
    assert other.action == "ask", f"{kept} kept for mcp-docs allows mcp-prod's tool: {other}"
