"""Hook implementations of the ``planning`` toolset (wiring only)."""

from __future__ import annotations

import neta
from neta_planning import todo

TOOLSET = neta.ToolsetSpec(
    name="planning",
    description="A todo list the agent plans with and the user watches.",
    requires="todo_store",
)


@neta.hookimpl
def neta_toolsets() -> list[neta.ToolsetSpec]:
    """Announce the ``planning`` toolset."""
    return [TOOLSET]


@neta.hookimpl
def neta_tools() -> list[neta.ToolSchema]:
    """Register the schema of todo."""
    return [todo.SCHEMA]


@neta.hookimpl
def neta_build_tools(session: neta.SessionContext) -> list[neta.Tool]:
    """Build this session's todo tool, bound to its todo store."""
    return [todo.build(session)]
