"""Lining a search up with a block of the file when one has a line the other lacks.

A model quoting a block skips a line now and then (a blank line, a comment, one of three
``}``) or writes one the file does not have there. Compared line by line at the same offset,
every line after that point faces the wrong file line, and where those happen to agree (two
``}``, two blank lines) an edit would be placed on the wrong side of the skipped line. So the
similarity strategies line the search up with the file by the best alignment instead: each
search line faces the file line most like it, at its own offset or, past a gap, one line off;
a file line that faces none was skipped by the model, and a search line that faces none is
one the file lacks. At most ``GAP_BAND`` lines face none.

Where several alignments are equally good (a skipped ``}`` among three), the two extremes are
kept: gaps as early as possible and as late as possible. An edit that comes out differently
on the two is refused, since which line the model skipped cannot be told.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

GAP_BAND = 1
"""How many lines may face none in an alignment: a line the model skipped or one it wrote."""

SCALE = 100
"""Pair values are similarities (0-100) times this, so that ties compare exactly."""

GAP_COST = SCALE
"""What a line facing nothing costs: one similarity point, so equal blocks pair line by line."""

_UNREACHED = -(1 << 60)

Facing = tuple[int | None, ...]
"""For each search line, the file line (0-based, in the whole file) it faces, or None."""


@dataclass(frozen=True)
class Alignment:
    """How a search lines up with the file.

    Attributes:
        facing: for each search line, the file line it faces (None: the file lacks it).
        others: other alignments as good as ``facing`` (gaps placed otherwise): an edit
            must come out the same on every one of them.
        value: how good they are: the sum ``align`` maximised.
    """

    facing: Facing
    others: tuple[Facing, ...] = ()
    value: int = 0

    @property
    def every(self) -> tuple[Facing, ...]:
        """``facing`` and ``others``, each once."""
        return tuple(dict.fromkeys((self.facing, *self.others)))

    @property
    def start(self) -> int:
        """The first file line of the block: the first one a search line faces (in any)."""
        return min(line for facing in self.every for line in facing if line is not None)

    @property
    def end(self) -> int:
        """The line just after the block."""
        return max(line for facing in self.every for line in facing if line is not None) + 1

    @property
    def positional(self) -> bool:
        """Whether each search line faces the file line at its own offset (and no other way)."""
        start = self.start
        return len(self.every) == 1 and all(
            line == start + offset for offset, line in enumerate(self.facing)
        )


def align(
    count: int,
    base: int,
    value: Callable[[int, int], int],
    *,
    bounds: tuple[int, int],
    ends_at: int | None = None,
) -> tuple[Facing, Facing, int] | None:
    """The best ways of facing ``count`` search lines with file lines near ``base``.

    Search line ``i`` faces file line ``base + i`` or, past one line facing none, one line
    off (at most ``GAP_BAND`` lines facing none in all); faced file lines keep their order. The
    value of an alignment is the sum of ``value(i, line)`` over the lines facing each other,
    less ``GAP_COST`` for each line facing none.

    Args:
        count: how many search lines there are.
        base: the file line the first search line faces when nothing is skipped.
        value: how well search line ``i`` and a file line match (``SCALE`` * similarity).
        bounds: the file lines that may be faced, ``(first, end)``.
        ends_at: None to let the block start anywhere within ``GAP_BAND`` lines of ``base``
            and end anywhere (file lines before its first faced line and after its last are
            not part of it); else the block is ``base`` to ``base + count + ends_at``
            exactly, every file line in it either faced or skipped.

    Returns:
        The alignment with gaps as early as possible, the one with gaps as late as possible,
        and their value; or None when no alignment fits.
    """
    band = GAP_BAND
    first, end = bounds
    states = [(drift, gaps) for drift in range(-band, band + 1) for gaps in range(band + 1)]
    best = [dict.fromkeys(states, _UNREACHED) for _ in range(count + 1)]
    paired: list[dict[int, int]] = [{} for _ in range(count)]
    for drift in range(-band, band + 1):
        if (ends_at is None or drift == 0) and first <= base + drift <= end:
            best[0][drift, 0] = 0
    fixed = ends_at is not None
    for line in range(count + 1):
        row = best[line]
        # A free block starts at its first faced line, so a skip before it is outside the
        # block; a fixed one is anchored on its first and last lines: no skip beyond them.
        if 0 < line < count or (line == count and not fixed):
            for drift, gaps in states:  # drifts ascending: skips may follow one another
                skipped = base + line + drift
                here = row[drift, gaps]
                if here > _UNREACHED and gaps < band and drift < band and first <= skipped < end:
                    key = (drift + 1, gaps + 1)
                    row[key] = max(row[key], here - GAP_COST)
        if line == count:
            break
        following = best[line + 1]
        for drift, gaps in states:
            here = row[drift, gaps]
            if here == _UNREACHED:
                continue
            faced = base + line + drift
            if first <= faced < end:
                pair = paired[line].get(drift)
                if pair is None:
                    pair = paired[line][drift] = value(line, faced)
                following[drift, gaps] = max(following[drift, gaps], here + pair)
            if drift > -band and gaps < band and not (fixed and line in (0, count - 1)):
                key = (drift - 1, gaps + 1)
                following[key] = max(following[key], here - GAP_COST)
    last = best[count]
    reached = [
        state
        for state in states
        if last[state] > _UNREACHED and (ends_at is None or state[0] == ends_at)
    ]
    if not reached:
        return None
    final = max(reached, key=lambda state: (last[state], -abs(state[0]), -state[1]))
    early = _walk_back(best, paired, base, final, fixed, gaps_first=False)
    late = _walk_back(best, paired, base, final, fixed, gaps_first=True)
    if all(line is None for line in early):
        return None
    return early, late, last[final]


def _walk_back(
    best: list[dict[tuple[int, int], int]],
    paired: list[dict[int, int]],
    base: int,
    final: tuple[int, int],
    fixed: bool,
    *,
    gaps_first: bool,
) -> Facing:
    """One best alignment, read back from its end; ``gaps_first`` puts gaps as late as can be."""
    facing: list[int | None] = [None] * (len(best) - 1)
    line = len(best) - 1
    drift, gaps = final
    while line:
        here = best[line][drift, gaps]
        before = best[line - 1]
        moves: list[str] = []
        pair = paired[line - 1].get(drift)
        if pair is not None and before[drift, gaps] + pair == here:
            moves.append("pair")
        anchored = fixed and line - 1 in (0, len(best) - 2)  # a fixed block's ends are faced
        came = before.get((drift + 1, gaps - 1), _UNREACHED) if gaps else _UNREACHED
        if not anchored and came - GAP_COST == here:
            moves.append("invent")
        skippable = gaps and (line < len(best) - 1 or not fixed)
        if skippable and best[line].get((drift - 1, gaps - 1), _UNREACHED) - GAP_COST == here:
            moves.append("skip")
        moves.sort(key=lambda move: (move == "pair") == gaps_first)
        move = moves[0]
        if move == "pair":
            line -= 1
            facing[line] = base + line + drift
        elif move == "invent":
            line -= 1
            drift, gaps = drift + 1, gaps - 1
        else:
            drift, gaps = drift - 1, gaps - 1
    return tuple(facing)
