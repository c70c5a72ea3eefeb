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


@neta.hookimpl
def neta_toolsets() -> list[neta.ToolsetSpec]:
    """Announce the ``crew`` and ``crew_child`` toolsets."""
    return [TOOLSET, CHILD_TOOLSET]


@neta.hookimpl
def neta_tools() -> list[neta.ToolSchema]:
    """Register the schemas of delegate_task, delegate_parallel and escalate."""
    return [delegate_task.SCHEMA, delegate_parallel.SCHEMA, escalate.SCHEMA]


@neta.hookimpl
def neta_build_tools(session: neta.SessionContext) -> list[neta.Tool]:
    """Build this session's instances; the delegate tools use its crew runner when called."""
    return [delegate_task.build(session), delegate_parallel.build(session), escalate.build(session)]
