"""Rules a person approved "always" for one workspace, kept in ``NETA_HOME``."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from neta.errors import ConfigError, os_reason
from neta.home import neta_home
from neta.permissions import _commands, _paths
from neta.permissions._policy import COMMAND_TOOLS, RuleSet
from neta.permissions._rule import MCP_PREFIX, RuleSyntaxError, parse_rule, rule_from_text

STORE_NAME = "approvals.json"
"""The file of approved rules, in ``NETA_HOME``."""

SOURCE = "NETA_HOME/approvals.json"
"""The source its rules name."""


class ApprovalStore:
    """Allow rules a person approved "always", per workspace (by its real path).

    The file is ``{"workspaces": {"/real/path": {"allow": ["bash(pytest -x)", ...]}}}``,
    readable by its owner only, and replaced whole on each change.

    Args:
        home: ``NETA_HOME`` (default: the current one).
    """

    def __init__(self, home: Path | None = None) -> None:
        self.path = (home or neta_home()) / STORE_NAME

    def entries(self, workspace: Path) -> list[str]:
        """The rules approved for ``workspace``, oldest first."""
        return list(self._read().get(_key(workspace), []))

    def rules(self, workspace: Path) -> RuleSet:
        """The rules approved for ``workspace``, as a source of a ``Policy``.

        Raises:
            ConfigError: the file cannot be read, or holds an entry that is no rule.
        """
        rules = []
        for text in self.entries(workspace):
            try:
                rules.append(rule_from_text(text, "allow", SOURCE))
            except RuleSyntaxError as exc:
                raise ConfigError(f"{self.path}: {_key(workspace)}: {exc}") from None
        return RuleSet(tuple(rules))

    def add(self, workspace: Path, rule: str) -> bool:
        """Approve ``rule`` for ``workspace``; false if it already was.

        Raises:
            ConfigError: ``rule`` is no rule.
        """
        rule = parse_rule(rule, "allow", "an approved rule").text
        data = self._read()
        entries = data.setdefault(_key(workspace), [])
        if rule in entries:
            return False
        entries.append(rule)
        self._write(data)
        return True

    def remove(self, workspace: Path, rule: str) -> bool:
        """Forget ``rule`` for ``workspace``; whether it was there."""
        data = self._read()
        entries = data.get(_key(workspace), [])
        if rule.strip() not in entries:
            return False
        entries.remove(rule.strip())
        if not entries:
            del data[_key(workspace)]
        self._write(data)
        return True

    def _read(self) -> dict[str, list[str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            reason = os_reason(exc) if isinstance(exc, OSError) else str(exc)
            raise ConfigError(f"{self.path}: cannot read approved rules: {reason}") from exc
        workspaces = data.get("workspaces") if isinstance(data, dict) else None
        if not isinstance(workspaces, dict) or not all(
            isinstance(entry, dict)
            and isinstance(entry.get("allow"), list)
            and all(isinstance(rule, str) for rule in entry["allow"])
            for entry in workspaces.values()
        ):
            raise ConfigError(
                f'{self.path}: expected {{"workspaces": {{PATH: {{"allow": [RULE, ...]}}}}}}'
            )
        return {path: list(entry["allow"]) for path, entry in workspaces.items()}

    def _write(self, data: dict[str, list[str]]) -> None:
        document = {"workspaces": {path: {"allow": rules} for path, rules in data.items()}}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(prefix=f".{STORE_NAME}.", dir=self.path.parent)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:  # mkstemp: mode 0600
                json.dump(document, file, indent=2)
                file.write("\n")
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


def allow_rules_for(
    tool: str, arguments: Mapping[str, Any], workspace: Path, toolset: str | None = None
) -> tuple[str, ...]:
    """Rules that would allow exactly this call, for "allow always"; none when none can.

    A ``bash`` line gives one rule per command (``cd src && pytest`` gives ``bash(cd src)``
    and ``bash(pytest)``); a line no allow rule can approve (``$(...)``, ``bash -c``, a
    redirection out of the workspace) gives none. A file tool's path is given from the
    workspace root, where it really leads; a folder gives none (its rule would cover all
    inside it). A tool of an MCP server's toolset, or one without a path, is named with its
    toolset (``mcp-docs.delete_all``), so the rule allows no other server's tool of that name.
    """
    if tool in COMMAND_TOOLS:
        command = arguments.get("command")
        if not isinstance(command, str):
            return ()
        patterns = _commands.exact_patterns(_commands.command_line(command), workspace)
        return tuple(f"{tool}({pattern})" for pattern in patterns)
    path = arguments.get("path")
    qualify = toolset is not None and (toolset.startswith(MCP_PREFIX) or not isinstance(path, str))
    name = f"{toolset}.{tool}" if qualify else tool
    if not isinstance(path, str):
        return (name,)
    _written, real = _paths.relative_paths(path, workspace)
    if real is None or (workspace / real).is_dir():
        return ()  # a rule naming a folder would cover all that is inside it
    return (f"{name}({_paths.escape(real)})",)


def _key(workspace: Path) -> str:
    return os.path.realpath(workspace)
