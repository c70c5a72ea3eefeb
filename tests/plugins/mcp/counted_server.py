"""A tiny MCP server over stdio that counts its starts and calls (no SDK: it starts at once).

Run as ``python counted_server.py STATE``: each start appends ``STARTED`` to ``STATE/log`` and
each call ``CALLED NAME``. Its version and tools are read from ``STATE/server.json`` when it
starts, so a test changes the server behind Neta's back by rewriting that file. A tool answers
with the arguments it got.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ECHO = {
    "name": "echo",
    "description": "Say the text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    "annotations": {"readOnlyHint": True},
}
"""A tool that changes nothing."""

SHOUT = {
    "name": "shout",
    "description": "Say the text back, loudly.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}


def write_state(state: Path, tools: list[dict[str, Any]], version: str = "1.0") -> None:
    """Give the server in ``state`` these tools and version from its next start."""
    state.mkdir(parents=True, exist_ok=True)
    (state / "server.json").write_text(json.dumps({"version": version, "tools": tools}))


def log(state: Path) -> list[str]:
    """What the server in ``state`` did: ``STARTED`` and ``CALLED NAME`` lines."""
    path = state / "log"
    return path.read_text().splitlines() if path.exists() else []


def server_entry(state: Path, script: Path | None = None) -> dict[str, Any]:
    """The ``mcpServers`` entry that runs this server (or its copy ``script``) with ``state``."""
    return {"command": sys.executable, "args": [str(script or __file__), str(state)]}


def _answer(request: dict[str, Any], server: dict[str, Any], state: Path) -> dict[str, Any]:
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "counted", "version": server["version"]},
        }
    if method == "tools/list":
        return {"tools": server["tools"]}
    if method == "tools/call":
        with (state / "log").open("a") as file:
            file.write(f"CALLED {params['name']}\n")
        text = json.dumps(params.get("arguments") or {})
        return {"content": [{"type": "text", "text": text}], "isError": False}
    return {}  # ping


def _main(state: Path) -> None:
    with (state / "log").open("a") as file:
        file.write("STARTED\n")
    server = json.loads((state / "server.json").read_text())
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request or "method" not in request:
            continue  # a notification, or an answer to a request this server never makes
        answer = {"jsonrpc": "2.0", "id": request["id"]}
        answer["result"] = _answer(request, server, state)
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    _main(Path(sys.argv[1]))
