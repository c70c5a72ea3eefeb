"""``sanitize_markup``: text made safe for a terminal (``neta.terminal_text``), in rich markup."""

from __future__ import annotations

from rich.markup import escape

from neta.terminal_text import sanitize


def sanitize_markup(text: str) -> str:
    """``sanitize(text)`` with rich markup escaped too, to print inside a markup string."""
    return escape(sanitize(text))
