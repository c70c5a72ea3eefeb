"""Whether a closing line matched with its indentation ignored binds the block the search says.

A strategy that ignores indentation compares each line's text only, so a search's closing
``}`` (or a Python line that leaves a block) finds any ``}`` of the file: an inner one as well
as the one it closes. The search's own indentation says which: its other lines map their
indentation onto the file's (by one shift, usually), and a closing line must sit where that
mapping puts it, at the depth of the block it closes, counted on the file.

A closing line is one that starts by closing a bracket, or one indented less than the line
before it in the search, which leaves a block (unless that line closed it with a bracket). The
mapping comes from the other lines; it says nothing when:

- the search is flattened: every line indented alike (the model dropped the indentation);
- its first line is unindented (copied from mid-line, or shifted left by more than it had):
  that line is left out;
- its other lines disagree among themselves (indentation garbled, prose): no depth is told
  (where every line closes a block, those lines must agree among themselves);
- it is re-indented with another unit: half the file's is told by depths the file's unit does
  not divide, any other only once three depths agree on it (two alone look like a level
  skipped).

A search whose lines that close nothing sit at one depth fits a shift and half the file's unit
alike. Matched line for line, it is read both ways where its depths are multiples of half the
file's unit and one is not of the whole unit: a closing line must sit where half the unit puts
it, and also where the shift does, unless the shift puts it off the file's grid (where no line
of the file could sit).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from neta.fuzzy_match._indent import indent_of, scaled_map, uniform_shift, width

_CLOSING = re.compile(r"\s*[)\]}]")
"""A line that starts by closing a bracket: it binds to the block its depth says."""

_SCALE_DEPTHS = 3
"""A search re-indented with another unit must show this many depths to be told as such."""

_Pair = tuple[int, str, str]
"""A search line's offset, its indentation, and the indentation of the file line it faces."""


@dataclass(frozen=True)
class NestingConflict:
    """A closing line of the search that the match puts at another depth than the search says.

    Attributes:
        offset: the search line (0-based) nested unlike the search's other lines.
        reference: the search line (0-based) whose depth it was compared with.
    """

    offset: int
    reference: int


def nesting_conflict(
    search: Sequence[str],
    block: Sequence[str],
    same: Iterable[int],
    unit: Callable[[], int] | None = None,
    step: Callable[[], int] | None = None,
    *,
    halves: bool = False,
) -> NestingConflict | None:
    """The first closing line of the search nested unlike in the file, or None.

    Args:
        search: the search's lines.
        block: the file's lines facing them (parallel to ``search``).
        same: the offsets of the lines that are the same in both up to whitespace; only
            those (and only non-blank ones) say anything about depth.
        unit: gives the file's indentation unit in columns (0 when unknown); asked only
            when the search may be re-indented with another unit.
        step: gives the file's commonest indentation step in spaces (0 when unknown); asked
            only when the search indents with tabs and the file with spaces, or the reverse.
        halves: the lines face the file's line for line, so a search at one depth may be read
            with half the file's unit too (see ``_half_unit``); where a line may be skipped, a
            dedent could as well span a level the search left out.
    """
    # The usual case first, on each distinct pair of indentations once: one shift for all.
    distinct: set[tuple[str, str]] = set()
    for offset in same:
        ours = search[offset]
        body = ours.lstrip(" \t")
        if body and not body.isspace():
            theirs = block[offset]
            indent = len(theirs) - len(theirs.lstrip(" \t"))
            distinct.add((ours[: len(ours) - len(body)], theirs[:indent]))
    if len({ours for ours, _ in distinct}) < 2:
        return None  # flattened (or one line): the search says nothing about depth
    shifted = uniform_shift(distinct, step)
    if shifted is not None and not (halves and _off_grid(shifted[1], unit)):
        return None
    pairs = [
        (offset, indent_of(search[offset]), indent_of(block[offset]))
        for offset in same
        if search[offset].strip()
    ]
    closing = _closing(search)
    if pairs[0][1] == "":
        pairs = pairs[1:]  # a first line without indentation says nothing about depth
    opening = [pair for pair in pairs if pair[0] not in closing]
    if halves and unit is not None:
        told, conflict = _half_unit(pairs, opening, closing, unit(), step)
        if told:
            return conflict
    if shifted is not None:
        return None
    mapping = _mapping(opening or pairs, unit, step)
    if mapping is None and opening:
        return None  # its lines that close nothing disagree: the search tells no depth
    if mapping is None:
        # Every line closes a block, and they disagree on how deep: one is bound otherwise.
        shifts = [width(theirs, 4) - width(ours, 4) for _, ours, theirs in pairs]
        at = next(number for number, shift in enumerate(shifts) if shift != shifts[0])
        return NestingConflict(pairs[at][0], pairs[at - 1][0])
    tab, shift, scale = mapping
    for offset, ours, theirs in pairs:
        if offset in closing and width(theirs, tab) != round(width(ours, tab) * scale) + shift:
            before = [pair[0] for pair in opening if pair[0] < offset]
            return NestingConflict(offset, before[-1] if before else opening[0][0])
    return None


def _closing(search: Sequence[str]) -> set[int]:
    """The search lines that close blocks: by a closing bracket, or by leaving indentation.

    A line indented less than the one before it closes the blocks between (Python's way),
    unless that line closed them already with a bracket.
    """
    closing: set[int] = set()
    previous: tuple[int, bool] | None = None  # the line before: its depth, and its bracket
    for offset, line in enumerate(search):
        if not line.strip():
            continue
        depth = width(indent_of(line), 4)
        bracket = _CLOSING.match(line) is not None
        if bracket or (previous is not None and depth < previous[0] and not previous[1]):
            closing.add(offset)
        previous = depth, bracket
    return closing


def _mapping(
    opening: Sequence[_Pair], unit: Callable[[], int] | None, step: Callable[[], int] | None
) -> tuple[int, int, float] | None:
    """How the search's indentation maps onto the file's, told by its lines that close none.

    ``(tab, shift, scale)``: a search line indented ``w`` columns sits at ``w * scale + shift``
    in the file. None when those lines do not agree on one mapping, or are too few to tell
    another unit from a skipped level.
    """
    if not opening:
        return None
    indents = {(ours, theirs) for _, ours, theirs in opening}
    shifted = uniform_shift(indents, step)
    if shifted is not None:
        return shifted[0], shifted[1], 1.0
    scaled = scaled_map(indents)
    if scaled is None:
        return None
    depths = {ours for ours, _ in indents}
    # Half the file's unit shows in depths the file's unit does not divide; a unit twice the
    # file's looks like a level skipped, until three depths agree on it.
    columns = unit() if unit is not None else 0
    odd = columns > 1 and any(width(indent, 4) % columns for indent in depths)
    if (scaled[2] > 1 and odd) or len(depths) >= _SCALE_DEPTHS:
        return scaled
    return None


def _off_grid(shift: int, unit: Callable[[], int] | None) -> bool:
    """Whether ``shift`` columns is no multiple of the file's indentation unit."""
    columns = unit() if unit is not None else 0
    return columns > 1 and shift % columns != 0


def _half_unit(
    pairs: Sequence[_Pair],
    opening: Sequence[_Pair],
    closing: set[int],
    columns: int,
    step: Callable[[], int] | None,
) -> tuple[bool, NestingConflict | None]:
    """Whether a search at one depth reads with half the file's unit, and if so its conflict.

    Its lines that close nothing, all at one depth, fit a shift and a scale of two alike; where
    the shift is off the file's grid and every depth of the search is a multiple of half the
    unit, the search may be written with half the unit. A closing line must then sit where the
    scale puts it, and where the shift puts it unless that is off the grid: a place only the
    shift fits, or only the scale while the shift could fit another, is nested unlike.
    """
    indents = {(ours, theirs) for _, ours, theirs in opening}
    if columns < 2 or columns % 2 or len({ours for ours, _ in indents}) != 1:
        return False, None
    shifted = uniform_shift(indents, step)
    if shifted is None or shifted[1] % columns == 0:
        return False, None
    tab, shift = shifted
    if any(width(ours, tab) % (columns // 2) for _, ours, _ in pairs):
        return False, None
    ours, theirs = next(iter(indents))
    base = width(theirs, tab) - 2 * width(ours, tab)
    reference = opening[0][0]
    disagreeing = None  # the first closing line the shift puts elsewhere
    shift_fits_grid = True
    for offset, ours, theirs in pairs:
        if offset not in closing:
            reference = offset
            continue
        depth = width(ours, tab)
        if width(theirs, tab) != 2 * depth + base:
            return True, NestingConflict(offset, reference)
        shift_fits_grid = shift_fits_grid and (depth + shift) % columns == 0
        if disagreeing is None and depth + shift != 2 * depth + base:
            disagreeing = NestingConflict(offset, reference)
    return True, disagreeing if shift_fits_grid else None
