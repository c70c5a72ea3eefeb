"""Applying an edit onto a block the matcher found: the file's own lines win where they may.

The edit is the line diff from ``old`` to ``new``. Lines it keeps are copied from the file, so
a model's stale or re-typed copy of them is never written back. Lines it rewrites or removes
must equal the file's up to whitespace (and typographic characters), else the edit is refused.
Lines it adds are re-indented to the file's indentation, keeping their relative nesting.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

from neta._fuzzy_text import key_fold

Opcode = tuple[str, int, int, int, int]

_TAB_SIZES = (4, 8, 2, 3)
"""Tab widths tried when relating a search's indentation to the file's."""


class StaleLineError(Exception):
    """A line the edit rewrites or removes is not the file's line (internal: becomes NoMatchError).

    Attributes:
        offset: the line's 0-based position in the matched block and in ``old``.
    """

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


def line_diff(old_lines: Sequence[str], new_lines: Sequence[str]) -> list[Opcode]:
    """The opcodes turning ``old_lines`` into ``new_lines``."""
    # Edits are small next to what they quote: diffing only the changed middle keeps a huge
    # old_string from making SequenceMatcher's quadratic worst case matter.
    limit = min(len(old_lines), len(new_lines))
    head = 0
    while head < limit and old_lines[head] == new_lines[head]:
        head += 1
    tail = 0
    while tail < limit - head and old_lines[-1 - tail] == new_lines[-1 - tail]:
        tail += 1
    old_end, new_end = len(old_lines) - tail, len(new_lines) - tail
    matcher = SequenceMatcher(
        None, old_lines[head:old_end], new_lines[head:new_end], autojunk=False
    )
    opcodes: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    for tag, old_from, old_to, new_from, new_to in matcher.get_opcodes():
        opcodes.append((tag, old_from + head, old_to + head, new_from + head, new_to + head))
    if tail:
        opcodes.append(("equal", old_end, len(old_lines), new_end, len(new_lines)))
    return opcodes


def merge(
    old_lines: Sequence[str],
    new_lines: Sequence[str],
    block: Sequence[str],
    opcodes: Sequence[Opcode],
) -> list[str]:
    """The lines that replace ``block``, the file's lines that ``old_lines`` matched.

    Raises:
        StaleLineError: a line the diff rewrites or removes differs from the file's.
    """
    reindent = _Reindent(old_lines, block)
    merged: list[str] = []
    for tag, old_from, old_to, new_from, new_to in opcodes:
        if tag == "equal":
            merged += block[old_from:old_to]
            continue
        for offset in range(old_from, old_to):
            theirs, ours = block[offset], old_lines[offset]
            if theirs != ours and key_fold(theirs) != key_fold(ours):
                raise StaleLineError(offset)
        # An added line is indented like the old line it replaces, or the one it follows.
        anchor = old_from if old_to > old_from else old_from - 1
        merged += (reindent(new_lines[index], anchor) for index in range(new_from, new_to))
    return merged


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _width(indent: str, tab: int) -> int:
    column = 0
    for char in indent:
        column += tab - column % tab if char == "\t" else 1
    return column


class _Reindent:
    """Maps indentation as the search wrote it to indentation as the file has it."""

    def __init__(self, old_lines: Sequence[str], block: Sequence[str]) -> None:
        written = [
            (offset, old, line)
            for offset, (old, line) in enumerate(zip(old_lines, block, strict=True))
            if old.strip() and line.strip()
        ]
        # Lines that really are the same line say how indentation maps; a fuzzy block's other
        # lines may be unrelated code.
        same = [
            pair for pair in written if pair[1] == pair[2] or key_fold(pair[1]) == key_fold(pair[2])
        ]
        self._pairs = [
            (offset, _indent(old), _indent(line)) for offset, old, line in same or written
        ]
        self._identity = all(ours == theirs for _, ours, theirs in self._pairs)
        self._tabs = any(line.startswith("\t") for line in block)
        self._uniform = self._uniform_shift()

    def _uniform_shift(self) -> tuple[int, int] | None:
        """``(tab, shift)`` when one column shift relates every search line to the file's."""
        for tab in _TAB_SIZES:
            shifts = {_width(theirs, tab) - _width(ours, tab) for _, ours, theirs in self._pairs}
            if len(shifts) == 1:
                return tab, shifts.pop()
        return None

    def _local_shift(self, anchor: int) -> tuple[int, int]:
        """The shift of the nearest matched line at or above ``anchor`` (else below)."""
        above = [pair for pair in self._pairs if pair[0] <= anchor]
        _, ours, theirs = above[-1] if above else self._pairs[0]
        return _TAB_SIZES[0], _width(theirs, _TAB_SIZES[0]) - _width(ours, _TAB_SIZES[0])

    def __call__(self, line: str, anchor: int) -> str:
        if self._identity:
            return line
        indent = _indent(line)
        body = line[len(indent) :]
        if not body.strip():
            return ""
        tab, shift = self._uniform or self._local_shift(anchor)
        columns = max(0, _width(indent, tab) + shift)
        if self._tabs:
            return "\t" * (columns // tab) + " " * (columns % tab) + body
        return " " * columns + body
