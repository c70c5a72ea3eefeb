"""Hook implementations of the ``crew`` toolset (wiring only)."""

from __future__ import annotations

import neta

TOOLSET = neta.ToolsetSpec(
    name="crew",
    description="Delegate tasks to sub-agents and collect their results.",
    requires="crew_runner",
)


@neta.hookimpl
def neta_toolsets() -> list[neta.ToolsetSpec]:
    """Announce the ``crew`` toolset."""
    return [TOOLSET]
