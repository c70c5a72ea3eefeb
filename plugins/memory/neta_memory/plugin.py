"""Hook implementations of the ``memory`` toolset (wiring only)."""

from __future__ import annotations

import neta
from neta_memory import memory_forget, memory_recall, memory_save
from neta_memory.sqlite_store import SQLiteMemoryStore

TOOLSET = neta.ToolsetSpec(
    name="memory",
    description="Save and recall durable facts about the user and the project.",
    requires="memory_store",
)

PLUGIN = neta.ToolsetPlugin(
    TOOLSET,
    tools=[
        (memory_save.SCHEMA, memory_save.build),
        (memory_recall.SCHEMA, memory_recall.build),
        (memory_forget.SCHEMA, memory_forget.build),
    ],
)

# The entry point names this module, so the module takes the three hooks by name.
neta_toolsets = PLUGIN.neta_toolsets
neta_tools = PLUGIN.neta_tools
neta_build_tools = PLUGIN.neta_build_tools


@neta.hookimpl
def neta_session_start(session: neta.SessionContext) -> None:
    """Give a session without a memory store the embedded SQLite one of its user scope.

    The scope is ``session.extras["user_scope"]`` (default ``"default"``); the store sees the
    session's workspace's memories only, unless ``session.extras["memory_scope"]`` is
    ``"global"``. The database is opened only when a memory tool first runs.
    """
    if session.memory_store is None:
        session.memory_store = SQLiteMemoryStore.for_session(session)
