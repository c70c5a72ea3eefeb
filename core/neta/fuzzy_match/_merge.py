"""Applying an edit onto a block the matcher found: the file's own lines win where they may.

The edit is the line diff from ``old`` to ``new``. Lines it keeps are copied from the file, so
a model's stale or re-typed copy of them is never written back. Lines it rewrites or removes
must equal the file's up to whitespace (and typographic characters), else the edit is refused.
Lines it adds are re-indented to the file's indentation, keeping their relative nesting; they
may not repeat a search line the file lacks (that would write the stale copy after all), and
they go only where a line the file has places them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from neta.fuzzy_match._diff import Opcode
from neta.fuzzy_match._text import key_fold

_Pair = tuple[int, str, str]
"""A search line's offset, its indentation, and the indentation of the file's line there."""

_TAB_SIZES = (4, 8, 2, 3)
"""Tab widths tried when relating a search's indentation to the file's."""


class StaleLineError(Exception):
    """An edit that relies on a line the file does not have (internal: becomes NoMatchError).

    Attributes:
        offsets: 0-based positions, in the matched block and in ``old``, of the lines at fault.
        reason: ``"changed"`` (the edit rewrites or removes them), ``"repeated"`` (new_string
            repeats them as new lines) or ``"placed"`` (they are all that locate an insertion).
    """

    def __init__(self, offsets: Sequence[int], reason: str) -> None:
        super().__init__(offsets, reason)
        self.offsets = list(offsets)
        self.reason = reason


def merge(
    old_lines: Sequence[str],
    new_lines: Sequence[str],
    block: Sequence[str],
    opcodes: Sequence[Opcode],
) -> list[str]:
    """The lines that replace ``block``, the file's lines that ``old_lines`` matched.

    Raises:
        StaleLineError: a line the diff rewrites or removes differs from the file's; an added
            line repeats a line of ``old_lines`` that differs from the file's; or nothing but
            such differing lines says where added lines go.
    """
    verified = [
        theirs == ours or theirs.strip() == ours.strip() or key_fold(theirs) == key_fold(ours)
        for theirs, ours in zip(block, old_lines, strict=True)
    ]
    # A block the search matched line for line (up to whitespace) needs none of the checks.
    checked = not all(verified)
    stale = _stale_keys([key_fold(line) for line in old_lines], verified) if checked else {}
    reindent = _Reindent(old_lines, block, verified)
    merged: list[str] = []
    for tag, old_from, old_to, new_from, new_to in opcodes:
        if tag == "equal":
            merged += block[old_from:old_to]
            continue
        if checked:
            _check_hunk(old_lines, new_lines, verified, stale, (old_from, old_to, new_from, new_to))
        # An added line is indented like the old line it replaces, or the one it follows.
        anchor = old_from if old_to > old_from else old_from - 1
        merged += [reindent(new_lines[index], anchor) for index in range(new_from, new_to)]
    return merged


def _check_hunk(
    old_lines: Sequence[str],
    new_lines: Sequence[str],
    verified: Sequence[bool],
    stale: dict[str, int],
    hunk: tuple[int, int, int, int],
) -> None:
    """Refuse a changed stretch that relies on lines of the search the file does not have."""
    old_from, old_to, new_from, new_to = hunk
    changed = [offset for offset in range(old_from, old_to) if not verified[offset]]
    if changed:
        raise StaleLineError(changed, "changed")
    if not _located(old_lines, verified, old_from, old_to):
        raise StaleLineError(_neighbours(old_lines, old_from, old_to), "placed")
    for line in new_lines[new_from:new_to]:
        repeated = stale.get(key_fold(line))
        if repeated is not None:
            raise StaleLineError([repeated], "repeated")


def _stale_keys(old_keys: Sequence[str], verified: Sequence[bool]) -> dict[str, int]:
    """Keys of the search's non-blank lines the file does not have, with their offsets.

    A key that some other search line does have in the file is known text, so it is left out.
    """
    known = {key for key, same in zip(old_keys, verified, strict=True) if same}
    stale: dict[str, int] = {}
    for offset, (key, same) in enumerate(zip(old_keys, verified, strict=True)):
        if not same and key and key not in known:
            stale.setdefault(key, offset)
    return stale


def _located(old_lines: Sequence[str], verified: Sequence[bool], start: int, end: int) -> bool:
    """Whether a file line the search has verbatim pins down the edit of ``old_lines[start:end]``.

    The lines it removes do when one is not blank (they were verified before). Otherwise the
    nearest non-blank line above or below must be the file's, and blank lines crossed on the
    way must face blank lines.
    """
    if any(line.strip() for line in old_lines[start:end]):
        return True
    for index, step in ((start - 1, -1), (end, 1)):
        while 0 <= index < len(old_lines) and verified[index] and not old_lines[index].strip():
            index += step
        if 0 <= index < len(old_lines) and verified[index]:
            return True
    return False


def _neighbours(old_lines: Sequence[str], start: int, end: int) -> list[int]:
    """The offsets of the nearest non-blank lines above and below ``old_lines[start:end]``."""
    above = next((i for i in range(start - 1, -1, -1) if old_lines[i].strip()), None)
    below = next((i for i in range(end, len(old_lines)) if old_lines[i].strip()), None)
    return [offset for offset in (above, below) if offset is not None]


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _width(indent: str, tab: int) -> int:
    column = 0
    for char in indent:
        column += tab - column % tab if char == "\t" else 1
    return column


class _Reindent:
    """Maps indentation as the search wrote it to indentation as the file has it."""

    def __init__(
        self, old_lines: Sequence[str], block: Sequence[str], verified: Sequence[bool]
    ) -> None:
        written = [
            (offset, old, line)
            for offset, (old, line) in enumerate(zip(old_lines, block, strict=True))
            if old.strip() and line.strip()
        ]
        # Lines that really are the same line say how indentation maps; a fuzzy block's other
        # lines may be unrelated code.
        same = [pair for pair in written if verified[pair[0]]]
        self._pairs = [
            (offset, _indent(old), _indent(line)) for offset, old, line in same or written
        ]
        self._identity = all(ours == theirs for _, ours, theirs in self._pairs)
        self._tabs = any(line.startswith("\t") for line in block)
        self._uniform = self._uniform_shift()
        # The matched lines by their indentation in the search, in search order; where all of
        # them map it to one indentation of the file, one of them stands for all.
        self._by_indent: dict[str, list[_Pair]] = {}
        for pair in self._pairs:
            self._by_indent.setdefault(pair[1], []).append(pair)
        for ours, pairs in self._by_indent.items():
            if len({theirs for _, _, theirs in pairs}) == 1:
                self._by_indent[ours] = pairs[:1]
        # Indentations of added lines already mapped, where the nearest line did not matter.
        self._known: dict[str, str] = {}

    def _uniform_shift(self) -> tuple[int, int] | None:
        """``(tab, shift)`` when one column shift relates every search line to the file's."""
        indents = {(ours, theirs) for _, ours, theirs in self._pairs}
        for tab in _TAB_SIZES:
            shifts = {_width(theirs, tab) - _width(ours, tab) for ours, theirs in indents}
            if len(shifts) == 1:
                return tab, shifts.pop()
        return None

    def _local_shift(self, anchor: int) -> tuple[int, int]:
        """The shift of the nearest matched line at or above ``anchor`` (else below)."""
        _, ours, theirs = _nearest(self._pairs, anchor)
        return _TAB_SIZES[0], _width(theirs, _TAB_SIZES[0]) - _width(ours, _TAB_SIZES[0])

    def _restyle(self, extra: str, base: str) -> str:
        """Indentation ``extra`` written as the file indents after ``base``: tabs or spaces."""
        if not extra:
            return ""
        tab = self._uniform[0] if self._uniform else _TAB_SIZES[0]
        columns = _width(extra, tab)
        if base.endswith("\t") or (not base and self._tabs):
            return "\t" * (columns // tab) + " " * (columns % tab)
        return " " * columns

    def __call__(self, line: str, anchor: int) -> str:
        if self._identity:
            return line
        indent = _indent(line)
        body = line[len(indent) :]
        if not body.strip():
            return ""
        # Indented like a matched search line (or deeper): start from that file line's own
        # indentation, so a new line and its sibling are indented byte for byte alike.
        known = self._known.get(indent)
        if known is not None:
            return known + body
        based = [ours for ours in self._by_indent if indent.startswith(ours)]
        if based:
            pairs = self._by_indent[max(based, key=len)]
            _, ours, theirs = pairs[0] if len(pairs) == 1 else _nearest(pairs, anchor)
            mapped = theirs + self._restyle(indent[len(ours) :], theirs)
            if len(pairs) == 1:
                self._known[indent] = mapped
            return mapped + body
        tab, shift = self._uniform or self._local_shift(anchor)
        columns = max(0, _width(indent, tab) + shift)
        if self._tabs:
            return "\t" * (columns // tab) + " " * (columns % tab) + body
        return " " * columns + body


def _nearest(pairs: Sequence[_Pair], anchor: int) -> _Pair:
    """The pair nearest at or above offset ``anchor`` (else the first below); sorted pairs."""
    index = bisect_right(pairs, anchor, key=lambda pair: pair[0]) - 1
    return pairs[max(index, 0)]
