"""Hook implementations of the ``memory`` toolset (wiring only)."""

from __future__ import annotations

import neta
from neta_memory import memory_forget, memory_recall, memory_save
from neta_memory.sqlite_store import DEFAULT_SCOPE, SQLiteMemoryStore

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

    The scope is ``session.extras["user_scope"]`` (default ``"default"``); the database is
    opened only when a memory tool first runs.
    """
    if session.memory_store is None:
        scope = session.extras.get("user_scope", DEFAULT_SCOPE)
        if not isinstance(scope, str):
            raise neta.ConfigError(f"session extra 'user_scope' must be text, not {scope!r}")
        session.memory_store = SQLiteMemoryStore.for_scope(scope)


@neta.hookimpl
def neta_build_tools(session: neta.SessionContext) -> list[neta.Tool]:
    """Build this session's instances; they use the session's memory store when called."""
    return [memory_save.build(session), memory_recall.build(session), memory_forget.build(session)]
