"""Long-term memory as tools see it: the store a session may carry, and the record it returns.

``SessionContext.memory_store`` holds a ``MemoryStore``; the ``memory`` toolset requires one.
The built-in ``memory`` plugin equips sessions with an embedded SQLite store; a host may
supply its own (any object with these three methods).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["Memory", "MemoryStore"]


@dataclass(frozen=True)
class Memory:
    """One saved fact.

    Attributes:
        id: the store's id for it (what ``forget`` takes).
        content: the fact, as saved.
        tags: its tags, lower-cased, in the order given.
        created: when it was saved (UTC).
    """

    id: int
    content: str
    tags: tuple[str, ...]
    created: dt.datetime

    def line(self) -> str:
        """The memory as one line a model reads: id, date, tags, then the fact."""
        tags = f" tags: {', '.join(self.tags)}" if self.tags else ""
        return f"[#{self.id} {self.created.date().isoformat()}{tags}] {self.content}"


@runtime_checkable
class MemoryStore(Protocol):
    """Long-term memory shared by the sessions of one user; hosts may supply their own.

    Methods raise ``neta.ToolError`` with a message the model can act on when they refuse.
    """

    def save(self, content: str, tags: Sequence[str] = ()) -> Memory:
        """Store a fact and return it with its id."""
        ...

    def recall(self, query: str, limit: int = 5) -> list[Memory]:
        """The facts most relevant to ``query``, best first, at most ``limit``."""
        ...

    def forget(self, memory_id: int) -> Memory | None:
        """Delete the fact ``memory_id`` and return it (``None`` when there was none)."""
        ...
