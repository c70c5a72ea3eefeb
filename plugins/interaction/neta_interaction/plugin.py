"""Hook implementations of the ``interaction`` toolset (wiring only)."""

from __future__ import annotations

import neta

TOOLSET = neta.ToolsetSpec(
    name="interaction",
    description="Ask the user a clarifying question and wait for the answer.",
    requires="user_channel",
)


@neta.hookimpl
def neta_toolsets() -> list[neta.ToolsetSpec]:
    """Announce the ``interaction`` toolset."""
    return [TOOLSET]
