"""Keeping long text short: the head and the tail, with a marker saying what was cut."""

from __future__ import annotations


def truncate_middle(text: str, limit: int) -> str:
    """Return ``text`` if it fits in ``limit`` characters, else its head and tail and a marker.

    The marker says how many characters were left out, so a reader knows output is missing.
    """
    if len(text) <= limit:
        return text
    keep = max(limit, 2)
    head = keep * 2 // 3
    tail = keep - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters omitted ...]\n{text[len(text) - tail :]}"
