"""Which blocks a similarity strategy may use, and how a search lines up with each.

A ``Judge`` lines one search up with candidate blocks (see ``_align``) and accepts a block
only when it shares text with the search, not just boilerplate (see ``carries_text``): a
line of text the file has at most twice, equal to the search's, and another equal or
nearly so. Braces, blank lines, keywords and lines the file repeats say nothing about where
a search belongs, and one line alone may be one the model wrote from elsewhere in the file.
The lines shared must also be nested as the search's are (see ``_nesting``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from rapidfuzz import fuzz

from neta.fuzzy_match._align import GAP_COST, SCALE, Alignment, align
from neta.fuzzy_match._indent import indent_of, uniform_shift, width
from neta.fuzzy_match._line_index import KeyKind
from neta.fuzzy_match._nesting import nesting_conflict
from neta.fuzzy_match._strategies import Context, NearMiss
from neta.fuzzy_match._text import carries_text

LINE_ALIKE = 80.0
"""A line at least this similar (0-100) to a file line is that line, changed a little."""

SHARED_TEXT_MIN = 2
"""A block must share this many of the search's lines of text (see ``Judge.usable``)."""

_PAIRED_MIN = 50.0
"""Alignment: lines less similar than this (0-100) are no likelier the same than unrelated."""

_RECURRING = 2
"""A line of text the file has more often than this is boilerplate there (``changed = true``)."""

_LINE_VALUE = 100 * SCALE
"""Alignment: what one line equal to the file's is worth."""

_DEPTH_BONUS = SCALE // 2
"""Alignment: what an equal line nested as the search's other lines say is worth, extra."""


class Judge:
    """Lines one search up with candidate blocks and decides which may be used."""

    def __init__(self, ctx: Context, strategy: str, lines: list[str], wanted: list[str]) -> None:
        self.ctx = ctx
        self.strategy = strategy
        self.lines = lines
        self.wanted = wanted
        self.key = ctx.index.key_getter(KeyKind.FOLD)
        self.spent = 0
        self.unlike: list[Alignment] = []
        """Alignments refused as nested unlike the search: they may still outrank a place."""

    def value(self, offset: int, line: int, depth: tuple[int, int] | None = None) -> int:
        """How well search line ``offset`` and file line ``line`` match, for ``align``.

        With ``depth`` (the tab width and shift mapping the search's indentation onto the
        file's), a line equal to the file's but nested otherwise is not the same line: a
        ``}`` binds only the block at its depth.
        """
        ours, theirs = self.wanted[offset], self.key(line)
        self.spent += 1
        if ours == theirs:
            if depth is None or not ours or (offset == 0 and not indent_of(self.lines[0])):
                return _LINE_VALUE
            tab, shift = depth
            mine = width(indent_of(self.lines[offset]), tab) + shift
            if width(indent_of(self.ctx.doc.lines[line]), tab) == mine:
                return _LINE_VALUE + _DEPTH_BONUS
            return -GAP_COST
        similar = fuzz.ratio(ours, theirs, score_cutoff=_PAIRED_MIN) if ours and theirs else 0.0
        # Unrelated lines (some 30-50% alike) are no more the same line than a line the model
        # wrote and one it skipped: facing each other costs what facing none does.
        return int(similar * SCALE) if similar else -GAP_COST

    def aligned(self, base: int, ends_at: int | None) -> Alignment | None:
        """The best alignment near ``base``, realigned by depth where the search tells it."""
        bounds = (0, self.ctx.doc.line_count)
        count = len(self.lines)
        found = align(count, base, self.value, bounds=bounds, ends_at=ends_at)
        if found is None:
            return None
        depth = self._depth(found[0])
        if depth is not None and not all(self._nested_alike(way, depth) for way in found[:2]):
            by_depth = partial(self.value, depth=depth)
            found = align(count, base, by_depth, bounds=bounds, ends_at=ends_at) or found
        early, late, value = found
        return Alignment(early, (late,), value)

    def _depth(self, facing: Sequence[int | None]) -> tuple[int, int] | None:
        """The one shift mapping the search's indentation onto the file's, from its text lines.

        Lines of text are rarely repeated, so they line up unambiguously; a shift they agree
        on tells which of several equal ``}`` lines each of the search's faces. A search
        indented all alike says nothing, and a first line without indentation, where others
        have some, was copied from mid-line: it is left out.
        """
        if len({indent_of(line) for line in self.lines if line.strip()}) < 2:
            return None
        doc_lines = self.ctx.doc.lines
        pairs = [
            (indent_of(self.lines[offset]), indent_of(doc_lines[line]))
            for offset, line in enumerate(facing)
            if line is not None
            and self.wanted[offset] == self.key(line)
            and carries_text(self.wanted[offset])
            and (offset or indent_of(self.lines[0]))
        ]
        doc = self.ctx.doc
        return uniform_shift(pairs, lambda: doc.indent_step) if pairs else None

    def _nested_alike(self, facing: Sequence[int | None], depth: tuple[int, int]) -> bool:
        """Whether every line facing an equal one is nested as ``depth`` maps the search's."""
        return all(
            self.value(offset, line, depth) > 0
            for offset, line in enumerate(facing)
            if line is not None and self.wanted[offset] == self.key(line)
        )

    def text_value(self, alignment: Alignment) -> int:
        """``alignment``'s value without what its blank lines facing blank lines add."""
        blank = sum(
            1
            for offset, line in enumerate(alignment.facing)
            if line is not None and not self.wanted[offset] and not self.key(line)
        )
        return alignment.value - blank * _LINE_VALUE

    def same(self, alignment: Alignment) -> list[int]:
        """The search lines equal (up to whitespace and typography) to the file line they face."""
        return self._equal(alignment.facing)

    def _equal(self, facing: Sequence[int | None]) -> list[int]:
        return [
            offset
            for offset, line in enumerate(facing)
            if line is not None and self.wanted[offset] == self.key(line)
        ]

    def usable(self, alignment: Alignment) -> bool:
        """Whether the block shares text with the search, nested as the search's is.

        Shared text (see ``_evidence``) must be ``SHARED_TEXT_MIN`` lines, one of them equal
        to the search's: one line alone could be a line the model wrote that the file has
        elsewhere. The lines shared must be nested alike (see ``_nesting``).
        """
        same = self.same(alignment)
        evidence = self._evidence(alignment)
        if len(evidence) < SHARED_TEXT_MIN or not set(evidence) & set(same):
            self._miss(alignment, evidence[0] if evidence else None, "boilerplate")
            return False
        doc_lines = self.ctx.doc.lines
        block = [doc_lines[line] if line is not None else "" for line in alignment.facing]
        alike = [
            offset
            for offset, line in enumerate(alignment.facing)
            if line is not None
            and fuzz.ratio(self.wanted[offset], self.key(line), score_cutoff=LINE_ALIKE)
        ]
        kin = sorted(set(same) | set(alike))
        doc = self.ctx.doc
        conflict = nesting_conflict(
            self.lines, block, kin, lambda: doc.indent_unit, lambda: doc.indent_step
        )
        if conflict is not None:
            self._miss(alignment, conflict.offset, "nesting", conflict.reference)
            self.unlike.append(alignment)
            return False
        return True

    def outranked(self, place: Alignment) -> bool:
        """Whether a block refused as nested unlike matches the search better elsewhere.

        Then the search belongs there, quoted with its indentation off, and ``place`` only
        shares some of its lines (perhaps lines the file repeats): a refusal, not an edit.
        """
        pairs = {
            (offset, facing[offset]) for facing in place.every for offset in self._equal(facing)
        }
        return any(
            unlike.value > place.value
            and not pairs
            & {(offset, unlike.facing[offset]) for offset in self._equal(unlike.facing)}
            for unlike in self.unlike
        )

    def lined_up(self, alignment: Alignment) -> bool:
        """Whether every line of text of the search faces a line at least somewhat like it."""
        return all(
            line is not None and (not ours or self.value(offset, line) > 0)
            for offset, (ours, line) in enumerate(zip(self.wanted, alignment.facing, strict=True))
        )

    def has_elsewhere(self, alignment: Alignment) -> bool:
        """Whether a line of text of the search that the block lacks is in the file."""
        index = self.ctx.index
        return any(
            carries_text(self.wanted[offset])
            and (line is None or self.wanted[offset] != self.key(line))
            and index.count_key(KeyKind.FOLD, self.lines[offset], 0)
            for offset, line in enumerate(alignment.facing)
        )

    def _evidence(self, alignment: Alignment) -> list[int]:
        """The search lines that say the block is the place: text the block shares with it.

        A line counts when it carries text, the file has it at most ``_RECURRING`` times (a
        line the file repeats says nothing about where), and it faces a line equal to it, or
        one ``LINE_ALIKE`` similar while the file has it nowhere exactly (where the file
        has it exactly, a merely similar line is some other line). Counting stops once there
        is enough.
        """
        index = self.ctx.index
        doc_lines = self.ctx.doc.lines
        equal: list[int] = []
        recurring: list[int] = []
        similar: list[int] = []
        facing = alignment.facing
        for offset, line in enumerate(facing):
            ours = self.wanted[offset]
            if line is None or not carries_text(ours):
                continue
            theirs = self.key(line)
            if ours == theirs:
                if index.count_key(KeyKind.FOLD, doc_lines[line], _RECURRING) <= _RECURRING:
                    equal.append(offset)
                else:
                    recurring.append(offset)
            elif fuzz.ratio(ours, theirs, score_cutoff=LINE_ALIKE):
                similar.append(offset)
            if len(equal) >= SHARED_TEXT_MIN:
                break
        evidence = list(equal)
        # A line the file repeats, next to a rarer one it shares in both the search and the
        # block, is that line's neighbour here: the pair is rarer than either line.
        for offset in recurring:
            if len(evidence) >= SHARED_TEXT_MIN:
                break
            line = facing[offset]
            if any(
                0 <= offset + step < len(facing)
                and offset + step in equal
                and facing[offset + step] == line + step  # type: ignore[operator]
                for step in (-1, 1)
            ):
                evidence.append(offset)
        for offset in similar:
            if len(evidence) >= SHARED_TEXT_MIN and equal:
                break
            line = alignment.facing[offset]
            assert line is not None
            if (
                not index.count_key(KeyKind.FOLD, self.lines[offset], 0)
                and index.count_key(KeyKind.FOLD, doc_lines[line], _RECURRING) <= _RECURRING
            ):
                evidence.append(offset)
        return sorted(evidence)

    def _miss(
        self, alignment: Alignment, offset: int | None, reason: str, reference: int | None = None
    ) -> None:
        facing = alignment.facing
        self.ctx.near_misses.append(
            NearMiss(
                strategy=self.strategy,
                start=alignment.start,
                end=alignment.end,
                reason=reason,
                offset=offset,
                line=None if offset is None else facing[offset],
                reference=reference,
                reference_line=None if reference is None else facing[reference],
            )
        )


def distinct(judge: Judge, accepted: list[Alignment]) -> list[Alignment]:
    """The accepted alignments, one per place: the best of those facing a line alike.

    Lined up from neighbouring first lines, one place can give several alignments; any two
    in which a search line faces the same file line, equal to it, are the same place. Those
    as good as the best are kept as its others: the edit must come out the same on each.
    """
    places: list[tuple[set[tuple[int, int | None]], list[Alignment]]] = []
    for alignment in sorted(accepted, key=lambda alignment: -alignment.value):
        pairs = {(offset, alignment.facing[offset]) for offset in judge.same(alignment)}
        place = next((place for place in places if place[0] & pairs), None)
        if place is None:
            places.append((pairs, [alignment]))
        elif place[1][0].value == alignment.value:
            place[0].update(pairs)
            place[1].append(alignment)
    distinct = [
        Alignment(
            best[0].facing,
            tuple(facing for alignment in best for facing in alignment.every),
            best[0].value,
        )
        for _, best in places
    ]
    kept = [place for place in distinct if not judge.outranked(place)]
    return competing(kept, judge.lined_up, judge.text_value)


def competing(
    places: list[Alignment],
    lined_up: Callable[[Alignment], bool] = lambda _: True,
    text_value: Callable[[Alignment], int] = lambda place: place.value,
) -> list[Alignment]:
    """The places that compete for the search: all of them, unless a gap made some qualify.

    A place found only by supposing a line skipped or written (a gap) competes only when it
    matches better than every place found line for line, or as well as one where a line of
    the search faces an unrelated line (which is as much a line the file lacks there as one a
    gap leaves out); and once some place needs a gap, a place that matches a whole line of
    text worse than the best one no longer competes (``text_value``: a place's value without
    its blank lines facing blank lines, which a gap merely moves from place to place).
    """
    positional = [place for place in places if place.positional]
    best = max((place.value for place in positional if lined_up(place)), default=None)
    loose = max((place.value for place in positional if not lined_up(place)), default=None)
    kept = [
        place
        for place in places
        if place.positional
        or ((best is None or place.value > best) and (loose is None or place.value >= loose))
    ]
    if all(place.positional for place in kept):
        return kept
    top = max(text_value(place) for place in kept)
    return [place for place in kept if text_value(place) > top - _LINE_VALUE]
