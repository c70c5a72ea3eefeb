r"""Text from models, tools, MCP servers and storage, made safe to show on a terminal.

Such text may hold characters a terminal obeys rather than shows: escape sequences that move
the cursor up and erase the line saying what ran (``ESC[3A ESC[2K``), clear the screen
(``ESC[2J``, or ``0x9b 2J`` with the one-byte C1 CSI), set the window title (OSC 0),
write the clipboard (OSC 52) or hide a link behind other text (OSC 8); a carriage return
that goes back to write over the line; bidirectional overrides and isolates that reorder
what is shown (``U+202E``: ``exe.txt`` shows for ``txt.exe``).

``sanitize`` shows each of them instead, as ``neta.paths.printable`` shows them in names: a
backslash escape as Python writes it. ESC is shown as the four characters ``\x1b``, a
carriage return as ``\r``, DEL as ``\x7f``, a C1 control as ``\x9b``, the right-to-left
override as ``\u202e``. Those characters are: the C0 controls but newline and tab, DEL, the
C1 controls (U+0080-U+009F), and U+202A-U+202E and U+2066-U+2069. A Windows line end
(``\r\n``) is shown as a line end. Everything else (any script, emoji joined by U+200D,
non-breaking spaces) is shown as it is, and a backslash is not doubled: the text shown is
for reading; ``--json`` gives it exactly, with ``json_escaped``. Names go further
(``printable`` escapes newlines, tabs and every unprintable character, so that a name stays
on one line); text keeps its lines and every script.
"""

from __future__ import annotations

import re

from neta.paths import printable

_OBEYED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""The characters a terminal acts on (or reorders text by) instead of showing them."""


def sanitize(text: str) -> str:
    r"""``text`` with the characters a terminal would obey shown as backslash escapes.

    ``"a\x1b[2Jb"`` becomes ``a\x1b[2Jb`` with a visible backslash; newlines and tabs stay.
    Use it on any text a plugin prints that came from elsewhere (a server's output, a
    file, a model); ``printable`` is for a name that must stay on one line.

    Args:
        text: the text to show.

    Returns:
        The text, unchanged when nothing in it would be obeyed.
    """
    if _OBEYED.search(text) is None:
        return text
    return _OBEYED.sub(_shown, text.replace("\r\n", "\n"))


def json_escaped(text: str) -> str:
    r"""JSON text with the characters ``sanitize`` shows written as ``\uXXXX``: the same value.

    ``json.dumps(..., ensure_ascii=False)`` escapes the C0 controls itself, but writes DEL,
    the C1 controls and the bidirectional overrides as they are.
    """
    return _OBEYED.sub(lambda found: f"\\u{ord(found[0]):04x}", text)


def _shown(found: re.Match[str]) -> str:
    return printable(found[0])
