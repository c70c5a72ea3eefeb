"""Hook implementations of the ``interaction`` toolset (wiring only)."""

from __future__ import annotations

import neta
from neta_interaction import clarify

TOOLSET = neta.ToolsetSpec(
    name="interaction",
    description="Ask the user a clarifying question and wait for the answer.",
    requires="user_channel",
)

PLUGIN = neta.ToolsetPlugin(TOOLSET, tools=[(clarify.SCHEMA, clarify.build)])

# The entry point names this module, so the module takes the three hooks by name.
neta_toolsets = PLUGIN.neta_toolsets
neta_tools = PLUGIN.neta_tools
neta_build_tools = PLUGIN.neta_build_tools
