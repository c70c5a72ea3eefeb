"""What a plugin may know about its host before any session exists: workspace and options."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from neta.trust import workspace_trusted

TRUST_OPTION = "trust_workspace"
"""The host option ``Agent(trust_workspace=...)`` fills: ``True``, ``False`` or absent."""


@dataclass(eq=False)
class HostSettings:
    """The host a plugin manager serves, as plugins with configuration-dependent tools see it.

    A plugin whose tools depend on the project (a toolset per configured server, say) reads
    its configuration from here when the catalog is built. Hooks receive it as the ``host``
    argument; one object per plugin manager configuration, so a plugin may key its own
    per-host state on it (compared by identity).

    Attributes:
        workspace: the root the host's sessions work in.
        options: host-supplied values for plugins, by key (``Agent(mcp_servers=...)`` puts
            its mapping under ``"mcp_servers"``).
    """

    workspace: Path
    options: Mapping[str, object] = field(default_factory=dict)

    def workspace_trusted(self) -> bool:
        """Whether the workspace's own configuration may be used now.

        That is ``.neta/mcp.json``, ``.neta/skills`` and ``.neta/permissions.toml``: as the
        host chose, else as the user's record of trusted workspaces says for the files as
        they are now (``neta.trust``).
        """
        setting = self.options.get(TRUST_OPTION)
        return workspace_trusted(self.workspace, setting if isinstance(setting, bool) else None)

    def same_as(self, workspace: Path, options: Mapping[str, object]) -> bool:
        """Whether these settings already say ``workspace`` and ``options``."""
        return self.workspace == workspace and dict(self.options) == dict(options)
