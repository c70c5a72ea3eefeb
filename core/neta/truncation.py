"""Keeping long text short: head and tail with a marker saying what was cut, or one line."""

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


def one_line(text: str, limit: int) -> str:
    """``text`` on one line (each run of whitespace made one space), cut to ``limit`` with ``…``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
