"""Hook implementations of the ``base`` toolset (wiring only)."""

from __future__ import annotations

import neta
from neta_base import bash, list_dir, patch, processes, read_file, write_file

TOOLSET = neta.ToolsetSpec(
    name="base",
    description="Shell, file reading and writing, directory listing and the patch tool.",
)


@neta.hookimpl
def neta_toolsets() -> list[neta.ToolsetSpec]:
    """Announce the ``base`` toolset."""
    return [TOOLSET]


@neta.hookimpl
def neta_tools() -> list[neta.ToolSchema]:
    """Register the schemas of bash, read_file, write_file, list_dir and patch."""
    return [bash.SCHEMA, read_file.SCHEMA, write_file.SCHEMA, list_dir.SCHEMA, patch.SCHEMA]


@neta.hookimpl
def neta_build_tools(session: neta.SessionContext) -> list[neta.Tool]:
    """Build this session's instances, each confined to its workspace."""
    return [
        bash.build(session),
        read_file.build(session),
        write_file.build(session),
        list_dir.build(session),
        patch.build(session),
    ]


@neta.hookimpl
def neta_run_end(session: neta.SessionContext, outcome: str) -> None:
    """A cancelled run takes every process its session's commands started with it."""
    if outcome == "cancelled":
        processes.sweep_session(processes.session_mark(session), ending=False)


@neta.hookimpl
def neta_session_end(session: neta.SessionContext) -> None:
    """Kill every process the session's commands started that still runs (escapes included)."""
    processes.sweep_session(processes.session_mark(session), ending=True)
