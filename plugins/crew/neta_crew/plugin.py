"""Hook implementations of the ``crew`` and ``crew_child`` toolsets (wiring only).

``crew`` (delegate_task, delegate_parallel) needs a crew runner, which the runtime gives only
to sessions whose depth allows children. ``crew_child`` (escalate) needs the ``crew_parent``
capability, which only children have; the runner puts it in every child's preset.
"""

from __future__ import annotations

import neta
from neta.crew import CREW_PARENT
from neta_crew import delegate_parallel, delegate_task, escalate

TOOLSET = neta.ToolsetSpec(
    name="crew",
    description="Delegate tasks to sub-agents and collect their results.",
    requires="crew_runner",
)

CHILD_TOOLSET = neta.ToolsetSpec(
    name="crew_child",
    description="For sub-agents: hand a question up to the agent that delegated the task.",
    requires=CREW_PARENT,
)

PLUGIN = neta.ToolsetPlugin(
    TOOLSET,
    CHILD_TOOLSET,
    tools=[
        (delegate_task.SCHEMA, delegate_task.build),
        (delegate_parallel.SCHEMA, delegate_parallel.build),
        (escalate.SCHEMA, escalate.build),
    ],
)

# The entry point names this module, so the module takes the three hooks by name.
neta_toolsets = PLUGIN.neta_toolsets
neta_tools = PLUGIN.neta_tools
neta_build_tools = PLUGIN.neta_build_tools
