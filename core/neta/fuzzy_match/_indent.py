"""How the lines an edit writes are indented: one mapping from old's indentation to the file's.

The mapping is derived from the lines old_string verifiably shares with the file. When one
column shift relates all of them (the usual case: old was copied with its indentation off by
a constant), new's lines get the same shift, so their relative nesting is kept. When no single
shift does (old was flattened, or lines were copied from different depths), old's indentation
says nothing: a changed line takes the indentation of the file line it replaces, and an added
line the one its neighbours imply, which must agree. Tabs stay tabs.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence

_Pair = tuple[int, str, str]
"""A search line's offset, its indentation, and the indentation of the file's line there."""

_TAB_SIZES = (4, 8, 2, 3)
"""Tab widths tried when relating a search's indentation to the file's."""


class UnclearIndentError(Exception):
    """The indentation of an added line cannot be told (internal: becomes NoMatchError).

    Attributes:
        offsets: the offsets, in old, of the lines on either side whose hints disagree.
    """

    def __init__(self, offsets: Sequence[int]) -> None:
        super().__init__(offsets)
        self.offsets = list(offsets)


def indent_of(line: str) -> str:
    """The leading spaces and tabs of ``line``."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def width(indent: str, tab: int) -> int:
    """The columns ``indent`` spans with tab stops every ``tab`` columns."""
    column = 0
    for char in indent:
        column += tab - column % tab if char == "\t" else 1
    return column


class Reindent:
    """Maps indentation as old_string wrote it to indentation as the file has it."""

    def __init__(
        self,
        old_lines: Sequence[str],
        block: Sequence[str],
        verified: Sequence[bool],
        *,
        tabs: bool = False,
    ) -> None:
        written = [
            offset
            for offset, (old, line) in enumerate(zip(old_lines, block, strict=True))
            if old.strip() and line.strip()
        ]
        # Lines that really are the same line say how indentation maps; a fuzzy block's other
        # lines may be unrelated code.
        same = [offset for offset in written if verified[offset]]
        self._block = block
        self._pairs = [
            (
                offset,
                old_lines[offset][: len(old_lines[offset]) - len(old_lines[offset].lstrip(" \t"))],
                block[offset][: len(block[offset]) - len(block[offset].lstrip(" \t"))],
            )
            for offset in same or written
        ]
        self.identity = all(ours == theirs for _, ours, theirs in self._pairs)
        # The file's style, or the block's when the file's was not told.
        self._tabs = tabs or any(line.startswith("\t") for line in block)
        self._uniform = self._uniform_shift()
        # Re-indented with another unit (2 columns for the file's 4): one column of old is
        # ``_scale`` of the file's.
        self._scale = 1.0
        if self._uniform is None and self._pairs:
            indents = {(ours, theirs) for _, ours, theirs in self._pairs}
            scaled = scaled_map(indents)
            # Twice the columns is a unit half the file's; half of them takes three depths to
            # tell from a first line copied without its indentation.
            depths = len({ours for ours, _ in indents})
            if scaled is not None and (scaled[2] > 1 or depths >= 3):
                tab, shift, self._scale = scaled
                self._uniform = tab, shift
        self.uniform = self._uniform is not None or not self._pairs
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
        return uniform_shift({(ours, theirs) for _, ours, theirs in self._pairs})

    def _tab(self) -> int:
        return self._uniform[0] if self._uniform else _TAB_SIZES[0]

    def _restyle(self, extra: str, base: str) -> str:
        """Indentation ``extra`` written as the file indents after ``base``: tabs or spaces."""
        if not extra:
            return ""
        tab = self._tab()
        columns = round(width(extra, tab) * self._scale)
        if base.endswith("\t") or (not base and self._tabs):
            return "\t" * (columns // tab) + " " * (columns % tab)
        return " " * columns

    def columns(self, count: int, like: str) -> str:
        """``count`` columns of indentation, in the style of the file's indentation ``like``."""
        tab = self._tab()
        if like.startswith("\t") or (not like and self._tabs):
            return "\t" * (count // tab) + " " * (count % tab)
        return " " * count

    def shifted(self, line: str, anchor: int) -> str:
        """``line`` re-indented by the one shift relating old to the file (``uniform``)."""
        if not line:
            return line
        indent = indent_of(line)
        body = line[len(indent) :]
        if self.identity:
            if self._tabs and indent and not indent.strip(" "):
                # Spaces where the file indents with tabs: tabs, as the file writes them.
                return self.columns(width(indent, self._tab()), "") + body
            return line
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
        tab, shift = self._uniform or (_TAB_SIZES[0], 0)
        return self.columns(max(0, round(width(indent, tab) * self._scale) + shift), "") + body

    def file_indent(self, offset: int) -> str:
        """The indentation of the file's line facing old's line at ``offset``."""
        return indent_of(self._block[offset])

    def width(self, indent: str) -> int:
        """The columns of ``indent`` at the mapping's tab width."""
        return width(indent, self._tab())


def uniform_shift(
    indents: Iterable[tuple[str, str]], step: Callable[[], int] | None = None
) -> tuple[int, int] | None:
    """``(tab, shift)`` when one column shift relates each of old's indentations to the file's.

    ``indents`` are ``(old's, the file's)`` pairs; several tab widths are tried. Where one
    side indents with tabs and the other with spaces, ``step`` gives the file's level width:
    a tab stands for one level, so a narrower or wider tab would nest old's lines otherwise.
    """
    pairs = set(indents)
    tabs: tuple[int, ...] = _TAB_SIZES
    if step is not None and _tabs_on_one_side(pairs):
        level = step()
        if level in _TAB_SIZES:
            tabs = (level,)
    for tab in tabs:
        if any(_spaces_after_tab(indent) >= tab for pair in pairs for indent in pair):
            continue  # spaces after a tab that make a tab or more: tabs are wider there
        shifts = {width(theirs, tab) - width(ours, tab) for ours, theirs in pairs}
        if len(shifts) == 1:
            return tab, shifts.pop()
    return None


def _spaces_after_tab(indent: str) -> int:
    """How many spaces follow the last tab of ``indent`` (0 without a tab)."""
    return len(indent) - indent.rindex("\t") - 1 if "\t" in indent else 0


def _tabs_on_one_side(pairs: Iterable[tuple[str, str]]) -> bool:
    """Whether one side indents with tabs only and the other with spaces only."""
    ours = "".join(indent for indent, _ in pairs)
    theirs = "".join(indent for _, indent in pairs)
    return bool(ours and theirs) and {*ours} != {*theirs} and len({*ours}) == len({*theirs}) == 1


SCALES = (2.0, 0.5)
"""How many of the file's columns one column of old may stand for, besides one."""


def scaled_map(indents: Iterable[tuple[str, str]]) -> tuple[int, int, float] | None:
    """``(tab, shift, scale)`` when the file's indentation is ``scale`` times old's plus a shift.

    Only for old indented at two depths or more (else any scale fits); one is tried first.
    """
    pairs = sorted(set(indents))
    if len({ours for ours, _ in pairs}) < 2:
        return None
    for tab in _TAB_SIZES:
        widths = [(width(ours, tab), width(theirs, tab)) for ours, theirs in pairs]
        ours_base, theirs_base = widths[0]
        for scale in SCALES:
            if all(theirs - theirs_base == scale * (ours - ours_base) for ours, theirs in widths):
                return tab, round(theirs_base - scale * ours_base), scale
    return None


def _nearest(pairs: Sequence[_Pair], anchor: int) -> _Pair:
    """The pair nearest at or above offset ``anchor`` (else the first below); sorted pairs."""
    index = bisect_right(pairs, anchor, key=lambda pair: pair[0]) - 1
    return pairs[max(index, 0)]
