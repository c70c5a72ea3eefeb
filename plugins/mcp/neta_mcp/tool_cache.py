"""Servers' tool lists kept in ``NETA_HOME``, so a catalog is built without starting them.

An entry is found by a key that hashes what decides which server runs: the entry's command,
arguments, environment and working folder (or its URL and headers), the sandbox it runs in,
and the path, size and modification time of its executable and of each file its arguments
name. The environment and headers (tokens, often) are only hashed, never written. With the
tools the entry keeps what the server reported about itself (``serverInfo``: name and
version); a server that later starts and lists other tools or reports another version gets
its entry replaced (see ``McpHost``). Entries are written atomically, readable by their user
only, one file per key so processes writing different servers never lose each other's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neta import SandboxPolicy
from neta_mcp.config import ServerConfig

CACHE_FOLDER = "mcp-tools"
"""The folder in ``NETA_HOME`` that holds the entries."""

_FORMAT = 1


@dataclass(frozen=True)
class Listing:
    """What a server said when it started: its tools (MCP's JSON form) and who it is.

    Attributes:
        tools: each tool as ``tools/list`` gives it (``name``, ``inputSchema``...).
        server: the server's ``serverInfo`` name and version (empty when it gave none).
    """

    tools: list[dict[str, Any]]
    server: dict[str, str] = field(default_factory=dict)

    def tool(self, name: str) -> dict[str, Any] | None:
        """The tool called ``name``, or ``None`` when the server has none."""
        return next((tool for tool in self.tools if tool.get("name") == name), None)


def cache_key(config: ServerConfig, workspace: Path, sandbox: SandboxPolicy | None) -> str | None:
    """The key of the server ``config`` describes; ``None`` when its executable is not found.

    (A server whose executable is missing is not looked up: starting it says what is wrong.)
    """
    if config.command is None:
        material: dict[str, Any] = {"url": config.url, "headers": config.headers}
    else:
        cwd = workspace / config.cwd if config.cwd else workspace
        executable = _executable(config.command, cwd, config.env.get("PATH"))
        if executable is None:
            return None
        material = {
            "command": config.command,
            "executable": _fingerprint(executable),
            "args": config.args,
            "files": [_fingerprint(path) for path in _named_files(config.args, cwd)],
            "env": config.env,
            "cwd": str(cwd),
            "sandbox": repr(sandbox),
        }
    text = json.dumps({"format": _FORMAT, **material}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class ToolCache:
    """The entries in ``folder`` (``NETA_HOME/mcp-tools``).

    Reading or writing an entry never fails: a missing, unreadable or malformed entry is not
    found (the server is started instead), and one that cannot be written is not kept.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def get(self, key: str) -> Listing | None:
        """The listing kept under ``key``, if there is a well-formed one."""
        try:
            data = json.loads((self.folder / f"{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("format") != _FORMAT or data.get("key") != key:
            return None
        tools, server = data.get("tools"), data.get("server")
        if not isinstance(tools, list) or not all(_is_tool(tool) for tool in tools):
            return None
        if not isinstance(server, dict) or not all(isinstance(v, str) for v in server.values()):
            return None
        return Listing(tools=tools, server=server)

    def put(self, key: str, name: str, listing: Listing) -> None:
        """Keep ``listing`` under ``key`` (``name``: the server's, for a reader of the file)."""
        data = {
            "format": _FORMAT,
            "key": key,
            "name": name,
            "server": listing.server,
            "tools": listing.tools,
        }
        target = self.folder / f"{key}.json"
        temporary = self.folder / f".{key}.{os.getpid()}.{secrets.token_hex(4)}"
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                json.dump(data, file)
            os.replace(temporary, target)
        except (OSError, TypeError, ValueError):  # a read-only home, a tool JSON cannot hold
            with contextlib.suppress(OSError):
                temporary.unlink()


def _is_tool(tool: object) -> bool:
    return (
        isinstance(tool, dict)
        and isinstance(tool.get("name"), str)
        and isinstance(tool.get("inputSchema"), dict)
    )


def _executable(command: str, cwd: Path, path: str | None) -> Path | None:
    if os.sep in command:
        found = cwd / command
        return found if found.is_file() else None
    which = shutil.which(command, path=path)
    return Path(which) if which else None


def _named_files(args: list[str], cwd: Path) -> list[Path]:
    """The arguments that name a file (a script the command runs, say)."""
    named = []
    for arg in args:
        if not arg or arg.startswith("-"):
            continue
        try:
            path = cwd / arg
            if path.is_file():
                named.append(path)
        except (OSError, ValueError):  # a name too long, a NUL byte
            continue
    return named


def _fingerprint(path: Path) -> list[object]:
    try:
        found = path.stat()
    except OSError:
        return [str(path)]
    return [str(path), found.st_size, found.st_mtime_ns]
