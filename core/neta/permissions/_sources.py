"""The policy in force for a workspace: every source of rules, read and joined in order."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from neta.errors import ConfigError
from neta.home import neta_home
from neta.permissions._approvals import SOURCE as APPROVALS_SOURCE
from neta.permissions._approvals import ApprovalStore
from neta.permissions._loading import HOME_FILE, WORKSPACE_FILE, load_rules
from neta.permissions._loading import rules_from_mapping as _from_mapping
from neta.permissions._modes import MODES
from neta.permissions._policy import Policy, RuleSet

PermissionsLike = Policy | RuleSet | Mapping[str, object] | str | None
"""What ``Agent(permissions=...)`` takes: a whole ``Policy`` (used as it is, no file is
read), a ``RuleSet`` (``flag_rules``), a mapping shaped like a rules file, a mode's name, or
``None`` (the files alone)."""


def given_rules(permissions: PermissionsLike, source: str = "Agent(permissions=...)") -> RuleSet:
    """The rules a program gives, as a source (a ``Policy`` gives its own rules and mode).

    Raises:
        ConfigError: an unknown mode, or an entry that is no rule.
    """
    if permissions is None:
        return RuleSet()
    if isinstance(permissions, Policy):
        return RuleSet(permissions.rules, permissions.mode, permissions.ignored)
    if isinstance(permissions, RuleSet):
        return permissions
    if isinstance(permissions, str):
        if permissions not in MODES:
            raise ConfigError(
                f"{source}: unknown mode {permissions!r}; the modes are {', '.join(MODES)}"
            )
        return _from_mapping({"mode": permissions}, source)
    return _from_mapping(permissions, source)


def policy_sources(
    workspace: Path,
    *,
    given: PermissionsLike = None,
    host: Mapping[str, object] | None = None,
    trusted: bool,
    home: Path | None = None,
) -> list[tuple[str, RuleSet]]:
    """Every source of rules for ``workspace``, in the order they are tried, with its name.

    A ``Policy`` given whole is the only source. Otherwise: the program's rules (``given``),
    the host's settings, ``NETA_HOME/permissions.toml``, the answers "allow always" kept
    for this workspace, and the workspace's ``.neta/permissions.toml`` (which may only
    narrow unless ``trusted``).

    Raises:
        ConfigError: a source cannot be read or holds something that is no rule; the message
            names the file and the line.
    """
    if isinstance(given, Policy):
        return [("Agent(permissions=...)", given_rules(given))]
    home = home or neta_home()
    return [
        ("the program", given_rules(given)),
        ("the host's settings", _from_mapping(host or {}, "host settings")),
        (
            f"NETA_HOME/{HOME_FILE}",
            load_rules(home / HOME_FILE, f"NETA_HOME/{HOME_FILE}", may_allow=True),
        ),
        (APPROVALS_SOURCE, ApprovalStore(home).rules(workspace)),
        (
            WORKSPACE_FILE,
            load_rules(workspace / WORKSPACE_FILE, WORKSPACE_FILE, may_allow=trusted),
        ),
    ]


def policy_for(
    workspace: Path,
    *,
    given: PermissionsLike = None,
    host: Mapping[str, object] | None = None,
    trusted: bool,
    home: Path | None = None,
) -> Policy:
    """The policy in force for ``workspace`` (see ``policy_sources``).

    Raises:
        ConfigError: a source cannot be read or holds something that is no rule.
    """
    sources = policy_sources(workspace, given=given, host=host, trusted=trusted, home=home)
    return Policy.from_sources(rules for _, rules in sources)
