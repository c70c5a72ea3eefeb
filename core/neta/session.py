"""The per-session context that tool factories close over, and the protocols it carries."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

EntryKind = Literal["cli", "gateway", "service", "crew"]
"""How the session was started: the terminal, the WebSocket gateway, REST, or as a crew child."""

ClarifyFn = Callable[[str, Sequence[str] | None], Awaitable[str]]
"""Ask the user ``question`` (with optional ``choices``) and return the answer."""

EventSink = Callable[[Any], None]
"""Receives the runtime's typed events (pydantic models); must not block."""

USER_CHANNEL = "user_channel"
"""Capability: a person can be asked (live or in the next message)."""
CLARIFY = "clarify"
"""Capability: a live callback asks the user and awaits the answer."""
TODO_STORE = "todo_store"
"""Capability: the session has a todo list store."""
CREW_RUNNER = "crew_runner"
"""Capability: the session can run sub-agents."""
MEMORY_STORE = "memory_store"
"""Capability: the session has a long-term memory store."""


def _discard(event: Any) -> None:
    del event


@dataclass(kw_only=True)
class SessionContext:
    """Everything a session's tools may use. Optional fields are capabilities.

    Attributes:
        workspace: the root every file tool is confined to.
        entry: how the session was started.
        session_id: a stable id (random by default).
        user_channel: whether a person can be asked at all (live or in the next message);
            ``None`` means "everyone but crew children".
        clarify: a live callback that asks the user and awaits the answer.
        todo_store: the session's todo list store.
        crew_runner: runs sub-agents (only top-level sessions have one).
        memory_store: long-term memory shared across sessions of a user.
        emit: where tools send events (e.g. ``todo_update``).
        depth: 0 for a top-level session, 1 for its children, and so on.
        extras: host- or plugin-specific values; each key also counts as a capability.
    """

    workspace: Path
    entry: EntryKind = "cli"
    session_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    user_channel: bool | None = None
    clarify: ClarifyFn | None = None
    todo_store: Any | None = None
    crew_runner: Any | None = None
    memory_store: Any | None = None
    emit: EventSink = _discard
    depth: int = 0
    extras: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.workspace = Path(self.workspace).resolve()
        if self.user_channel is None:
            self.user_channel = self.entry != "crew"

    @property
    def capabilities(self) -> frozenset[str]:
        """The names of the capabilities this session has (what toolsets may require)."""
        present = {
            USER_CHANNEL: bool(self.user_channel),
            CLARIFY: self.clarify is not None,
            TODO_STORE: self.todo_store is not None,
            CREW_RUNNER: self.crew_runner is not None,
            MEMORY_STORE: self.memory_store is not None,
        }
        return frozenset(name for name, has in present.items() if has) | frozenset(self.extras)
