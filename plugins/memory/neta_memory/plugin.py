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


@neta.hookimpl
def neta_toolsets() -> list[neta.ToolsetSpec]:
    """Announce the ``memory`` toolset."""
    return [TOOLSET]


@neta.hookimpl
def neta_tools() -> list[neta.ToolSchema]:
    """Register the schemas of memory_save, memory_recall and memory_forget."""
    return [memory_save.SCHEMA, memory_recall.SCHEMA, memory_forget.SCHEMA]


@neta.hookimpl
def neta_session_start(session: neta.SessionContext) -> None:
    """Give a session without a memory store the embedded SQLite one of its user scope.

    The scope is ``session.extras["user_scope"]`` (default ``"default"``); the store sees the
    session's workspace's memories only, unless ``session.extras["memory_scope"]`` is
    ``"global"``. The database is opened only when a memory tool first runs.
    """
    if session.memory_store is None:
        session.memory_store = SQLiteMemoryStore.for_session(session)


@neta.hookimpl
def neta_build_tools(session: neta.SessionContext) -> list[neta.Tool]:
    """Build this session's instances; they use the session's memory store when called."""
    return [memory_save.build(session), memory_recall.build(session), memory_forget.build(session)]
