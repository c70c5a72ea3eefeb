"""Hook implementations of the ``planning`` toolset (wiring only)."""

from __future__ import annotations

import neta
from neta_planning import todo

TOOLSET = neta.ToolsetSpec(
    name="planning",
    description="A todo list the agent plans with and the user watches.",
    requires="todo_store",
)

PLUGIN = neta.ToolsetPlugin(TOOLSET, tools=[(todo.SCHEMA, todo.build)])

# The entry point names this module, so the module takes the three hooks by name.
neta_toolsets = PLUGIN.neta_toolsets
neta_tools = PLUGIN.neta_tools
neta_build_tools = PLUGIN.neta_build_tools
