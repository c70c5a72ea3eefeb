"""What one memory entry may hold (the limits), and finding the session's store."""

from __future__ import annotations

import re
from collections.abc import Sequence

import neta

MAX_CONTENT_CHARS = 4000
"""The longest fact one memory may hold."""

MAX_TAGS = 10
"""How many tags one memory may carry."""

MAX_TAG_CHARS = 40
"""The longest tag."""

_TAG = re.compile(r"^[^\s,]+$")


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


def store_of(session: neta.SessionContext) -> neta.MemoryStore:
    """The session's memory store; a session without one gets a ``ToolError``."""
    store = session.memory_store
    if store is None:
        raise neta.ToolError("this session has no memory store, so nothing can be remembered")
    if not isinstance(store, neta.MemoryStore):
        raise neta.ToolError(
            f"the session's memory store ({type(store).__name__}) lacks save, recall or forget"
        )
    return store
