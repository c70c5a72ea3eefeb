"""The core's import graph: no circles, and host apps enter hosting through its front door.

The graph is read by ``lint.import_graph`` (every import counts, wherever it stands).
"""

import ast
from pathlib import Path

from lint import import_graph as graphs

CORE = Path(__file__).resolve().parents[2] / "core"


def import_graph() -> dict[str, set[str]]:
    return graphs.import_graph(CORE)


def core_modules() -> dict[str, Path]:
    return graphs.core_modules(CORE)


circles = graphs.circles

HOST_APPS = (
    "neta.gateway",
    "neta.service",
    "neta.console",
    "neta.cli.mcp_server",
    "neta.server",
)
HOSTING_DOORS = {"neta.hosting.hub", "neta.hosting.protocol"}
"""What a host app may import from ``neta.hosting``: the hub (its front door ``act``, the
check of who may connect ``refusal``, the config it is built from and the live sessions it
hands out) and the wire protocol."""


def test_the_graph_reads_function_level_and_type_checking_imports():
    graph = import_graph()
    assert "neta.hosting.hub" in graph["neta.server"]
    assert "neta.server" in graph["neta.cli.serve_cmd"]  # imported inside a function
    assert "neta.hosting.store.postgres_calls" in graph["neta.hosting.store.postgres"]
    assert "neta.hosting.store.postgres_sql" in graph["neta.hosting.store.postgres_calls"]


def test_circles_finds_a_loop_of_three_and_leaves_a_chain_alone():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_core_has_no_import_circle():
    found = circles(import_graph())
    assert found == [], "import circles in core/neta: " + "; ".join(
        " <-> ".join(group) for group in found
    )


def test_host_apps_import_from_hosting_only_its_front_door():
    graph = import_graph()
    hosts = [
        name
        for name in graph
        if any(name == app or name.startswith(f"{app}.") for app in HOST_APPS)
    ]
    assert "neta.gateway.server" in hosts
    assert "neta.service.agent_executor" in hosts
    beside_the_door = {
        host: sorted(
            target
            for target in graph[host]
            if target.startswith("neta.hosting") and target not in HOSTING_DOORS
        )
        for host in hosts
    }
    assert {host: found for host, found in beside_the_door.items() if found} == {}


HUB_DOOR_NAMES = {"Connection", "HostConfig", "SessionHub", "check_config"}
"""What a host app may import from ``neta.hosting.hub``: the hub, its config, the connection
it hands a WebSocket; never a ``LiveSession`` (a command goes through ``SessionHub.act``)."""

HUB_INSIDES = {"bus", "cluster", "leases", "store"}
"""The hub's parts a host app never touches: it acts through ``act`` and reads frames."""


def names_imported_from(path: Path, module: str) -> set[str]:
    return {
        alias.name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module == module
        for alias in node.names
    }


def hub_insides_used(path: Path) -> list[str]:
    """The ``hub.<inside>`` attribute chains in a file (``hub``, ``x.hub`` or ``_hub(...)``)."""

    def is_hub(node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id == "hub"
        if isinstance(node, ast.Attribute):
            return node.attr == "hub"
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and (node.func.id == "_hub")
        )

    found = [
        (node.lineno, f"line {node.lineno}: hub.{node.attr}")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr in HUB_INSIDES and is_hub(node.value)
    ]
    return [chain for _, chain in sorted(found)]


def test_host_apps_import_from_the_hub_module_only_the_hub_its_config_and_connections():
    modules = core_modules()
    hosts = {
        name: path
        for name, path in modules.items()
        if any(name == app or name.startswith(f"{app}.") for app in HOST_APPS)
    }
    extra = {
        name: sorted(names_imported_from(path, "neta.hosting.hub") - HUB_DOOR_NAMES)
        for name, path in hosts.items()
    }
    assert {name: found for name, found in extra.items() if found} == {}


def test_gateway_and_rest_service_use_no_part_of_the_hubs_store_cluster_or_leases():
    modules = core_modules()
    used = {
        name: hub_insides_used(modules[name])
        for name in ("neta.gateway.server", "neta.service.agent_executor", "neta.server")
    }
    assert {name: found for name, found in used.items() if found} == {}


def test_the_hub_insides_check_finds_a_chain_reaching_into_the_store(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "async def f(hub, request):\n"
        "    await hub.store.run_calls().exists('s')\n"
        "    request.app.state.hub.cluster.follow()\n"
        "    _hub(request).leases.claim('s')\n"
        "    hub.config.token\n",
        encoding="utf-8",
    )
    assert hub_insides_used(sample) == [
        "line 2: hub.store",
        "line 3: hub.cluster",
        "line 4: hub.leases",
    ]
