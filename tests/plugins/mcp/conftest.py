"""Fixtures for the MCP plugin: an isolated NETA_HOME, real servers, and the in-test HTTP server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import neta
import neta.plugins
from neta_mcp import plugin as mcp_plugin
from tests.plugins.mcp import asking_server

TIME = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
"""The reference time server, over stdio."""


def marked(server: dict[str, Any], mark: str) -> dict[str, Any]:
    """``server`` with ``NETA_TEST_MARK=mark`` in its environment (see ``server_processes``)."""
    return {**server, "env": {**server.get("env", {}), "NETA_TEST_MARK": mark}}


def git_server(repo: Path) -> dict[str, Any]:
    """The reference git server for ``repo``, over stdio."""
    return {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", str(repo)]}


def write_config(path: Path, servers: dict[str, Any]) -> Path:
    """Write ``{"mcpServers": servers}`` to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def mcp_pm() -> neta.plugins.NetaPluginManager:
    """A plugin manager with only the MCP plugin."""
    return neta.create_plugin_manager(load_entrypoints=False, plugins=[("mcp", mcp_plugin)])


def server_processes(mark: str) -> list[int]:
    """The pids of this process's children started with ``NETA_TEST_MARK=mark``."""
    found = []
    wanted = f"NETA_TEST_MARK={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and wanted in environ:
            found.append(int(entry.name))
    return found


@pytest.fixture(autouse=True)
def neta_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh NETA_HOME, so no real mcp.json is read."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("NETA_HOME", str(home))
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root


@pytest.fixture(scope="module")
def asking() -> Iterator[asking_server.Running]:
    """The in-test MCPServer over streamable HTTP (eliciting, progress, images...)."""
    running = asking_server.start()
    yield running
    running.stop()


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    (repo / "notes.txt").write_text("first\n")
    return repo
