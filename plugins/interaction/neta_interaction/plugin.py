"""Hook implementations of the ``interaction`` toolset (wiring only)."""

from __future__ import annotations

import neta
from neta_interaction import clarify

TOOLSET = neta.ToolsetSpec(
    name="interaction",
    description="Ask the user a clarifying question and wait for the answer.",
    requires="user_channel",
)


@neta.hookimpl
def neta_toolsets() -> list[neta.ToolsetSpec]:
    """Announce the ``interaction`` toolset."""
    return [TOOLSET]


@neta.hookimpl
def neta_tools() -> list[neta.ToolSchema]:
    """Register the schema of clarify."""
    return [clarify.SCHEMA]


@neta.hookimpl
def neta_build_tools(session: neta.SessionContext) -> list[neta.Tool]:
    """Build this session's clarify tool, bound to its clarify callback (if any)."""
    return [clarify.build(session)]
