"""Hook implementations of the ``planning`` toolset (wiring only)."""

from __future__ import annotations

import neta

TOOLSET = neta.ToolsetSpec(
    name="planning",
    description="A todo list the agent plans with and the user watches.",
)


@neta.hookimpl
def neta_toolsets() -> list[neta.ToolsetSpec]:
    """Announce the ``planning`` toolset."""
    return [TOOLSET]
