"""The command line's tables: long cells wrap onto more lines, never cut short.

A narrow terminal cut a cell with an ellipsis (``OPENAI_BASE_UR…``), hiding what a user must
copy; here each column wraps at spaces and folds a word too long for it onto the next line,
so every character is shown.
"""

from __future__ import annotations

from rich.table import Column, Table


def folding_table(*headers: str) -> Table:
    """A table without borders whose columns wrap, and fold a word too long for them."""
    return Table(*(Column(header, overflow="fold") for header in headers), box=None)
