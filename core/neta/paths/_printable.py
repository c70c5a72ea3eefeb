"""Names shown to a model with control characters escaped, so one can never break a line."""

from __future__ import annotations

import os


def printable(text: str | os.PathLike[str]) -> str:
    r"""``text`` with control characters escaped, so a name can never break a line.

    A file called ``"a\nb"`` is shown as ``a\nb`` with a visible backslash; tabs, carriage
    returns, escape sequences, other control and line-separator characters likewise.
    """
    value = os.fspath(text)
    if value.isprintable():
        return value
    return "".join(char if char.isprintable() or char == " " else _escape(char) for char in value)


def _escape(char: str) -> str:
    escaped = repr(char)[1:-1]
    return escaped if escaped != char else f"\\u{ord(char):04x}"
