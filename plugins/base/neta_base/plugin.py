"""Hook implementations of the ``base`` toolset (wiring only)."""

from __future__ import annotations

import neta

TOOLSET = neta.ToolsetSpec(
    name="base",
    description="Shell, file reading and writing, directory listing and the patch tool.",
)


@neta.hookimpl
def neta_toolsets() -> list[neta.ToolsetSpec]:
    """Announce the ``base`` toolset."""
    return [TOOLSET]
