"""The per-session context that tool factories close over, and the protocols it carries."""

from __future__ import annotations

import dataclasses
import math
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypedDict

from neta.crew import SubAgentRunner
from neta.errors import ConfigError
from neta.events import Event
from neta.memory import MemoryStore
from neta.permissions import ApproveFn, Policy
from neta.sandbox import SandboxPolicy
from neta.todos import TodoStore

__all__ = [
    "CLARIFY",
    "CREW_RUNNER",
    "MEMORY_STORE",
    "TODO_STORE",
    "USER_CHANNEL",
    "ClarifyFn",
    "EntryKind",
    "EventSink",
    "SessionCapabilities",
    "SessionContext",
    "checked_timeout",
]

EntryKind = Literal["cli", "gateway", "service", "crew"]
"""How the session was started: the terminal, the WebSocket gateway, REST, or as a crew child."""

ClarifyFn = Callable[[str, Sequence[str] | None], Awaitable[str]]
"""Ask the user ``question`` (with optional ``choices``) and return the answer."""

EventSink = Callable[[Event], None]
"""Receives the runtime's typed events (``neta.events``); must not block."""

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


def _discard(event: Event) -> None:
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
        approve: a live callback that asks the user to approve a tool call (``None``: approvals
            are asked through ``clarify`` as a question with choices, when there is one).
        defer_approvals: when nobody can be asked live, leave a call that needs approval
            pending and end the run: the next message answers it (REST does this). Otherwise
            such a call is denied.
        permissions: what runs without asking (``neta.permissions``); the agent sets it.
        clarify_timeout: seconds the ``clarify`` tool waits for ``clarify``'s answer before
            telling the model to decide for itself (``None``: the tool's own default).
        todo_store: the session's todo list store.
        crew_runner: runs sub-agents (only top-level sessions have one).
        memory_store: long-term memory shared across sessions of a user.
        emit: where tools send events (e.g. ``todo_update``).
        depth: 0 for a top-level session, 1 for its children, and so on.
        sandbox: how the commands it runs are confined (``neta.sandbox``; on by default).
        extras: host- or plugin-specific values; each key also counts as a capability. A key
            may not be the name of a field (set the field).

    Raises:
        ConfigError: ``clarify_timeout`` is not a positive, finite number, or an ``extras``
            key names a field.
    """

    workspace: Path
    entry: EntryKind = "cli"
    session_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    user_channel: bool | None = None
    clarify: ClarifyFn | None = None
    approve: ApproveFn | None = None
    defer_approvals: bool = False
    permissions: Policy = field(default_factory=Policy)
    clarify_timeout: float | None = None
    todo_store: TodoStore | None = None
    crew_runner: SubAgentRunner | None = None
    memory_store: MemoryStore | None = None
    emit: EventSink = _discard
    depth: int = 0
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    extras: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.workspace = Path(self.workspace).resolve()
        if self.user_channel is None:
            self.user_channel = self.entry != "crew"
        if self.clarify_timeout is not None:
            self.clarify_timeout = checked_timeout("clarify_timeout", self.clarify_timeout)
        clashing = sorted({f.name for f in dataclasses.fields(self)} & set(self.extras))
        if clashing:
            raise ConfigError(
                f"extras key {clashing[0]!r} is a SessionContext field; "
                f"pass it as {clashing[0]}=... instead"
            )

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


class SessionCapabilities(TypedDict, total=False):
    """The ``SessionContext`` fields a host may pass to ``Agent.new_session``."""

    user_channel: bool | None
    approve: ApproveFn | None
    defer_approvals: bool
    clarify_timeout: float | None
    todo_store: TodoStore | None
    crew_runner: SubAgentRunner | None
    memory_store: MemoryStore | None
    depth: int
    sandbox: SandboxPolicy
    permissions: Policy
    extras: dict[str, object]


def checked_timeout(name: str, value: object) -> float:
    """``value`` as seconds, when it is a positive, finite number (not a bool).

    Raises:
        ConfigError: it is not.
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ConfigError(f"{name} must be a positive, finite number of seconds, not {value!r}")
    return float(value)
