"""What a command says, or asks, before it uses a workspace whose own configuration is untrusted.

A workspace's own configuration (``.neta/mcp.json``, ``.neta/skills``, the allow rules of
``.neta/permissions.toml``) is used only once the
user trusts the workspace (``neta.trust``). ``neta run`` and ``neta chat`` at a terminal ask
once, naming each command the configuration would start; every other command, and these
without a terminal, go on without it and say so in one line.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import typer
from rich.console import Console

from neta.cli.sanitize import sanitize_markup
from neta.paths import printable
from neta.trust import CONFIG_FOLDER, TrustStore, config_files, workspace_trusted

_LONGEST = 300  # characters of one command shown


def describe(workspace: Path) -> list[str]:
    """Lines naming what trusting ``workspace`` lets in: each command and each skill."""
    root = workspace / CONFIG_FOLDER
    lines: list[str] = []
    skills: set[str] = set()
    for path in config_files(workspace):
        relative = path.relative_to(root)
        if relative.parts[0] == "skills" and len(relative.parts) > 2:
            skills.add(_shown(relative.parts[1]))
        elif relative.name == "mcp.json":
            lines += _servers(path)
        elif relative.name == "permissions.toml":
            lines.append(
                f"  {CONFIG_FOLDER}/permissions.toml (its allow rules and mode let calls run)"
            )
    if skills:
        lines.append(f"  {CONFIG_FOLDER}/skills: {', '.join(sorted(skills))} (read into prompts)")
    return lines


def _servers(path: Path) -> list[str]:
    try:
        servers = json.loads(path.read_text(encoding="utf-8")).get("mcpServers", {})
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return [f"  {CONFIG_FOLDER}/mcp.json (unreadable)"]
    if not isinstance(servers, dict):
        return [f"  {CONFIG_FOLDER}/mcp.json (not an mcpServers object)"]
    lines = []
    for name, entry in servers.items():
        entry = entry if isinstance(entry, dict) else {}
        where = f"  {CONFIG_FOLDER}/mcp.json: server {_shown(repr(str(name)))}"
        if "command" in entry:
            given = entry.get("args")
            args: list[object] = given if isinstance(given, list) else []
            command = shlex.join(str(part) for part in [entry["command"], *args])
            lines.append(f"{where} runs: {_shown(command)}")
        else:
            lines.append(f"{where} at {_shown(str(entry.get('url')))}")
        for key in ("cwd", "env", "headers"):
            if entry.get(key):
                value = entry[key]
                shown = ", ".join(map(str, value)) if isinstance(value, dict) else str(value)
                lines.append(f"    {key}: {_shown(shown)}")
    return lines


def _shown(text: str) -> str:
    """``text`` on one line (line breaks escaped) and at most ``_LONGEST`` characters."""
    line = printable(text)
    return line if len(line) <= _LONGEST else line[:_LONGEST] + f"… ({len(line):,} characters)"


def settle_trust(workspace: Path, *, ask: bool) -> None:
    """Before a command uses ``workspace``, when it has its own configuration and is untrusted.

    ``ask``: on a terminal, ask once whether to trust it (and record the answer yes); else,
    or when the answer is no, say in one line that the configuration is ignored.
    """
    workspace = workspace.resolve()
    if workspace_trusted(workspace):
        return
    console = Console(stderr=True, highlight=False)
    if ask and sys.stdin is not None and sys.stdin.isatty():
        console.print(
            f"[yellow]{sanitize_markup(str(workspace))} has configuration that can run "
            "commands or steer the model:[/]"
        )
        for line in describe(workspace):
            console.print(sanitize_markup(line))
        answer = typer.prompt("Trust this workspace and use it? [y/N]", default="n", err=True)
        if answer.strip().lower() in ("y", "yes"):
            TrustStore().trust(workspace)
            return
    console.print(
        f"Note: ignoring {CONFIG_FOLDER}/mcp.json, {CONFIG_FOLDER}/skills and the allow rules "
        f"of {CONFIG_FOLDER}/permissions.toml in {sanitize_markup(str(workspace))}: the "
        "workspace is not trusted (neta trust to use them)."
    )
