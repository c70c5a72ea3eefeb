"""MCP server start-up: what starting at catalog time, the cached list and a lazy start cost.

Run: python bench/mcp_bench.py   (prints milliseconds for the reference time server over stdio)

- catalog: building the catalog starts the server and lists its tools (once per server entry:
  the list is cached in NETA_HOME);
- catalog, cached: a later process builds its catalog from the cache, starting nothing;
- first call, adopted: the host's first session calls through the catalog's connection;
- first call, lazy: a later session's first call starts its own server;
- warm call: a call on a connection that is already up.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

import neta
from neta.runtime.agent import Agent
from neta_mcp import plugin as mcp_plugin

TIME = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def _call(session: neta.AgentSession) -> float:
    bound = session.tools["get_current_time"]
    started = time.perf_counter()
    result = asyncio.run(bound.tool.invoke({"timezone": "UTC"}))
    assert not result.is_error, result.content
    return (time.perf_counter() - started) * 1000


def _catalog(workspace: Path) -> tuple[Agent, float]:
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("mcp", mcp_plugin)])
    started = time.perf_counter()  # the agent asks for the toolsets: the servers' lists
    agent = Agent(provider=None, plugin_manager=pm, workspace=workspace, mcp_servers={"t": TIME})
    pm.catalog()
    return agent, (time.perf_counter() - started) * 1000


def _measure(workspace: Path) -> dict[str, float]:
    agent, catalog_ms = _catalog(workspace)
    first = agent.new_session()
    adopted_ms = _call(first)
    warm_ms = statistics.median(_call(first) for _ in range(5))
    second = agent.new_session()
    lazy_ms = _call(second)
    agent.end_session(first)
    agent.end_session(second)
    cached_ms = _catalog(workspace)[1]
    return {
        "catalog": catalog_ms, "cached": cached_ms, "adopted": adopted_ms, "lazy": lazy_ms,
        "warm": warm_ms,
    }  # fmt: skip


def main() -> None:
    runs = []
    for _ in range(3):
        with TemporaryDirectory() as home:  # an empty cache for each run
            os.environ["NETA_HOME"] = home
            runs.append(_measure(Path(home)))
    for key, label in [
        ("catalog", "catalog build (start + list tools)"),
        ("cached", "catalog build, list cached"),
        ("adopted", "first call, adopted connection"),
        ("lazy", "first call, lazy start"),
        ("warm", "warm call (median of 5)"),
    ]:
        values = [run[key] for run in runs]
        print(
            f"{label:38s} median {statistics.median(values):8.1f} ms  (runs: "
            + ", ".join(f"{v:.0f}" for v in values)
            + ")"
        )


if __name__ == "__main__":
    main()
