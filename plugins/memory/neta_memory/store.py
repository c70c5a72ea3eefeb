"""What a memory store is: the protocol the tools call, the record it returns, the entry limits."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import neta

MAX_CONTENT_CHARS = 4000
"""The longest fact one memory may hold."""

MAX_TAGS = 10
"""How many tags one memory may carry."""

MAX_TAG_CHARS = 40
"""The longest tag."""

_TAG = re.compile(r"^[^\s,]+$")


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


def check_entry(content: str, tags: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """Validate one entry against the size limits and normalise it.

    Returns:
        The content stripped of surrounding whitespace, and the tags stripped, lower-cased
        and without duplicates.

    Raises:
        neta.ToolError: the content is empty or too long, or a tag is empty, too long,
            contains whitespace or a comma, or there are too many tags.
    """
    text = content.strip()
    if not text:
        raise neta.ToolError("the memory is empty; give the fact to remember as content")
    if len(text) > MAX_CONTENT_CHARS:
        raise neta.ToolError(
            f"the memory is {len(text):,} characters long; the limit is {MAX_CONTENT_CHARS:,}. "
            "Save the durable fact in fewer words, or split it into separate memories"
        )
    cleaned = tuple(dict.fromkeys(tag.strip().lower() for tag in tags))
    if len(cleaned) > MAX_TAGS:
        raise neta.ToolError(f"{len(cleaned)} tags given; a memory may have at most {MAX_TAGS}")
    for tag in cleaned:
        if not tag or not _TAG.match(tag):
            raise neta.ToolError(
                f"invalid tag {tag!r}: a tag is one non-empty word without spaces or commas"
            )
        if len(tag) > MAX_TAG_CHARS:
            raise neta.ToolError(
                f"tag {tag[:MAX_TAG_CHARS]}... is {len(tag)} characters long; "
                f"the limit is {MAX_TAG_CHARS}"
            )
    return text, cleaned


def store_of(session: neta.SessionContext) -> MemoryStore:
    """The session's memory store; a session without one gets a ``ToolError``."""
    store = session.memory_store
    if store is None:
        raise neta.ToolError("this session has no memory store, so nothing can be remembered")
    if not isinstance(store, MemoryStore):
        raise neta.ToolError(
            f"the session's memory store ({type(store).__name__}) lacks save, recall or forget"
        )
    return store
