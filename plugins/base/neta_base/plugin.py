"""Hook implementations of the ``base`` toolset (wiring only)."""

from __future__ import annotations

import neta
from neta_base import bash, list_dir, patch, processes, read_file, write_file

TOOLSET = neta.ToolsetSpec(
    name="base",
    description="Shell, file reading and writing, directory listing and the patch tool.",
)

PLUGIN = neta.ToolsetPlugin(
    TOOLSET,
    tools=[
        (bash.SCHEMA, bash.build),
        (read_file.SCHEMA, read_file.build),
        (write_file.SCHEMA, write_file.build),
        (list_dir.SCHEMA, list_dir.build),
        (patch.SCHEMA, patch.build),
    ],
)

# The entry point names this module, so the module takes the three hooks by name.
neta_toolsets = PLUGIN.neta_toolsets
neta_tools = PLUGIN.neta_tools
neta_build_tools = PLUGIN.neta_build_tools


@neta.hookimpl
def neta_run_end(session: neta.SessionContext, outcome: str) -> None:
    """A cancelled run takes every process its session's commands started with it."""
    if outcome == "cancelled":
        processes.sweep_session(processes.session_mark(session), ending=False)


@neta.hookimpl
def neta_session_end(session: neta.SessionContext) -> None:
    """Kill every process the session's commands started that still runs (escapes included)."""
    processes.sweep_session(processes.session_mark(session), ending=True)
