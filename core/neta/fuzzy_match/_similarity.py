"""The two strategies that match by similarity: ``block_anchor`` and ``context_aware``.

They run only after every strict strategy found nothing, score lines with ``rapidfuzz``, and
accept a block only when exactly one qualifies; what the edit may then change is checked line
by line when it is merged onto the file (see ``_merge``).

A block may have one line more or fewer than the search (a line the model skipped, or wrote
though the file lacks it): the search is lined up with it, never line by line at the same
offset, and a block is accepted only when it shares text with the search, nested alike (see
``_judge``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from rapidfuzz import fuzz

from neta.fuzzy_match._align import GAP_BAND, Alignment
from neta.fuzzy_match._indent import indent_of, width
from neta.fuzzy_match._judge import LINE_ALIKE, Judge, distinct
from neta.fuzzy_match._line_index import KeyKind, LineIndex
from neta.fuzzy_match._strategies import Context, Found
from neta.fuzzy_match._text import is_placeholder, key_fold, split_lines

BLOCK_MIDDLE_MIN = 60.0
"""block_anchor: the least mean similarity (0-100) of the lines between the two anchors."""

CONTEXT_LINE_MIN = LINE_ALIKE
"""context_aware: the least similarity (0-100) for a line to count as matching."""

CONTEXT_SHARE = 0.5
"""context_aware: the share of the search's non-blank lines that must match."""

FUZZY_MIN_LINES = 3
"""block_anchor and context_aware need at least this many non-blank lines."""

_FUZZY_BUDGET = 60_000
"""Line comparisons one fuzzy strategy may spend before it gives up as undecidable."""

_VOTE_BUDGET = 5_000
"""context_aware: file lines it may draw candidate blocks from (rarest lines first)."""

_FUZZY_ACCEPT_MAX = 10
"""Fuzzy strategies stop after accepting this many blocks: one is all they may use."""


def _fuzzy_lines(search: str) -> tuple[list[str], bool, list[str]] | None:
    """The search's lines, final newline and folded keys if a similarity strategy may use it."""
    lines, trailing = split_lines(search)
    if sum(1 for line in lines if line.strip()) < FUZZY_MIN_LINES:
        return None
    if any(is_placeholder(line) for line in lines):
        return None  # elided text cannot be verified, so it must never be matched loosely
    return lines, trailing, [key_fold(line) for line in lines]


def block_anchor(ctx: Context, search: str) -> Found | None:
    """First and last lines equal (as for unicode_normalized), the lines between similar.

    The lines between the anchors are lined up with the file's (one may be missing from
    either), and their mean similarity must reach ``BLOCK_MIDDLE_MIN``. A blank line facing
    a blank line or none (as a line the search skipped) is left out of the mean; a blank line
    facing text, or a line of text facing none, scores 0.
    """
    usable = _fuzzy_lines(search)
    if usable is None or not usable[0][0].strip() or not usable[0][-1].strip():
        return None
    lines, trailing, wanted = usable
    judge = Judge(ctx, "block_anchor", lines, wanted)
    accepted: dict[tuple[int | None, ...], Alignment] = {}
    firsts: list[int] | None = None
    for extra in (0, *_GAPS):
        size = len(lines) + extra
        if size < 2 or size > ctx.doc.line_count:
            continue
        keys = ctx.index.keyed(KeyKind.FOLD)
        if keys is None:
            probe = [lines[0], *[""] * (size - 2), lines[-1]]
            candidates = ctx.index.windows(KeyKind.FOLD, probe, checked=(0, size - 1))
        else:
            # Every line is keyed already: the first anchor's lines are found once.
            if firsts is None:
                firsts = [line for line, key in enumerate(keys) if key == wanted[0]]
            last = len(keys) - size
            candidates = [
                start for start in firsts if start <= last and keys[start + size - 1] == wanted[-1]
            ]
        candidates = _anchors_nested_alike(ctx.doc.lines, lines, candidates, size)
        if extra:
            survivors, unsure = _banded_middles(judge, candidates, size)
        else:
            survivors, unsure = _score_middles(ctx.index, wanted, candidates)
        if unsure:
            return _undecided(list(accepted.values()), survivors, lines, trailing)
        for number, start in enumerate(survivors):
            if judge.spent > _FUZZY_BUDGET or len(accepted) >= _FUZZY_ACCEPT_MAX:
                rest = survivors[number:]
                return _undecided(list(accepted.values()), rest, lines, trailing)
            alignment = judge.aligned(start, extra)
            if (
                alignment is not None
                and alignment.facing[0] == start
                and alignment.facing[-1] == start + size - 1
                and _middle_mean(judge, alignment) >= BLOCK_MIDDLE_MIN
                and judge.usable(alignment)
            ):
                accepted.setdefault(alignment.facing, alignment)
    places = distinct(judge, list(accepted.values()))
    incomplete = False
    if any(judge.has_elsewhere(place) for place in places):
        # Lines of the search this block lacks are in the file elsewhere: the block may be
        # anchored on a line the model wrote from there. Where context_aware finds the
        # search as likely somewhere else, that place competes.
        rivals, incomplete = _context_places(Judge(ctx, "block_anchor", lines, wanted))
        places = distinct(judge, [*places, *rivals])
    return _fuzzy_found(places, lines, trailing, incomplete)


def _undecided(
    accepted: list[Alignment], survivors: list[int], lines: list[str], trailing: bool
) -> Found:
    """Too many blocks resemble the search to check them all: a match that must be refused."""
    starts = sorted({*(alignment.start for alignment in accepted), *survivors})
    search = "\n".join(lines)
    return Found(starts, len(lines), True, search, trailing, fuzzy=True, incomplete=True)


_GAPS = tuple(extra for gap in range(1, GAP_BAND + 1) for extra in (-gap, gap))
"""How many lines fewer or more than the search a block may have, besides as many."""


def _sign(number: int) -> int:
    return (number > 0) - (number < 0)


def _anchors_nested_alike(
    file_lines: Sequence[str], lines: Sequence[str], candidates: list[int], size: int
) -> list[int]:
    """The candidates whose last anchor is nested relative to their first as the search's is.

    Deeper, level or shallower alike; a search whose lines are all indented alike (flattened)
    says nothing, and keeps every candidate. ``size`` is the candidates' length in lines.
    """
    depths = {width(indent_of(line), 4) for line in lines if line.strip()}
    if len(depths) < 2:
        return candidates
    ours = _sign(width(indent_of(lines[-1]), 4) - width(indent_of(lines[0]), 4))
    last = size - 1
    return [
        start
        for start in candidates
        if _sign(
            width(indent_of(file_lines[start + last]), 4) - width(indent_of(file_lines[start]), 4)
        )
        == ours
    ]


def _middle_mean(judge: Judge, alignment: Alignment) -> float:
    """The mean similarity of the search's lines between the anchors, as they are lined up."""
    total = 0.0
    count = 0
    for offset in range(1, len(alignment.facing) - 1):
        line = alignment.facing[offset]
        ours = judge.wanted[offset]
        theirs = None if line is None else judge.key(line)
        if not ours and not theirs:
            continue  # a blank line facing one, or none: it says nothing either way
        count += 1
        if ours and theirs:
            total += 100.0 if ours == theirs else fuzz.ratio(ours, theirs)
    return total / count if count else 100.0


def _banded_middles(judge: Judge, candidates: list[int], size: int) -> tuple[list[int], bool]:
    """The candidates of ``size`` lines whose middle may reach ``BLOCK_MIDDLE_MIN``, lined up.

    Each middle line of the search is scored against the best of the file lines it may face
    (its own offset, or one off), which bounds the mean of any alignment from above.
    """
    wanted = judge.wanted
    survivors: list[int] = []
    for start in candidates:
        if judge.spent > _FUZZY_BUDGET:
            return survivors, True
        end = start + size - 1
        total = 0.0
        count = 0
        written_left = sum(1 for key in wanted[1:-1] if key)
        for offset in range(1, len(wanted) - 1):
            ours = wanted[offset]
            faced = [
                judge.key(start + offset + drift)
                for drift in range(-GAP_BAND, GAP_BAND + 1)
                if start < start + offset + drift < end
            ]
            judge.spent += len(faced)
            if not ours:
                count += 0 if "" in faced or not faced else 1
                continue
            written_left -= 1
            count += 1
            total += max((fuzz.ratio(ours, theirs) for theirs in faced if theirs), default=0.0)
            if total + 100.0 * written_left < BLOCK_MIDDLE_MIN * (count + written_left):
                break
        else:
            if not count or total >= BLOCK_MIDDLE_MIN * count:
                survivors.append(start)
    return survivors, False


def _score_middles(
    index: LineIndex, wanted: list[str], candidates: list[int]
) -> tuple[list[int], bool]:
    """The candidate blocks whose middle lines reach ``BLOCK_MIDDLE_MIN``, and if that is unsure.

    All candidates are scored one middle line at a time, and a candidate is dropped as soon as
    its mean can no longer reach the minimum. When the comparisons exceed the budget while many
    candidates survive, those survivors are returned as unsure.
    """
    key = index.key_getter(KeyKind.FOLD)
    keyed = index.keyed(KeyKind.FOLD)
    ratio = fuzz.ratio
    alive = candidates
    totals = [0.0] * len(alive)
    # Every candidate has scored as many lines as the others until a blank line of the search
    # faces text in some and not in others: only then do counts differ.
    scored = 0
    counts: list[int] | None = None
    written_left = sum(1 for wanted_key in wanted[1:-1] if wanted_key)
    spent = 0
    for offset in range(1, len(wanted) - 1):
        if len(alive) <= _FUZZY_ACCEPT_MAX:
            # Few survivors left: finishing them one by one is cheaper than column by column.
            finished = zip(alive, totals, counts or [scored] * len(alive), strict=True)
            return [
                start
                for start, total, count in finished
                if _final_mean(key, wanted, start, offset, total, count) >= BLOCK_MIDDLE_MIN
            ], False
        if spent > _FUZZY_BUDGET:
            return alive, True
        spent += len(alive)
        line_key = wanted[offset]
        if line_key:
            written_left -= 1
            theirs = key if keyed is None else keyed.__getitem__
            totals = [
                total + ratio(line_key, theirs(start + offset))
                for total, start in zip(totals, alive, strict=True)
            ]
            if counts is None:
                scored += 1
            else:
                counts = [count + 1 for count in counts]
        else:
            counts = [
                count + (1 if key(start + offset) else 0)
                for count, start in zip(counts or [scored] * len(alive), alive, strict=True)
            ]
        # Lines still to come add at most 100 each, and blank ones only lower the mean.
        best = 100.0 * written_left
        if counts is None:
            least = BLOCK_MIDDLE_MIN * (scored + written_left) - best
            keep = [position for position, total in enumerate(totals) if total >= least]
        else:
            keep = [
                position
                for position, (total, count) in enumerate(zip(totals, counts, strict=True))
                if total + best >= BLOCK_MIDDLE_MIN * (count + written_left)
            ]
        if len(keep) < len(alive):
            alive = [alive[position] for position in keep]
            totals = [totals[position] for position in keep]
            if counts is not None:
                counts = [counts[position] for position in keep]
    return alive, False


def _final_mean(
    key: Callable[[int], str], wanted: list[str], start: int, offset: int, total: float, count: int
) -> float:
    """The mean similarity of a block's middle lines, given their sum and count before offset."""
    for later in range(offset, len(wanted) - 1):
        theirs = key(start + later)
        if wanted[later]:
            total += fuzz.ratio(wanted[later], theirs)
        elif not theirs:
            continue
        count += 1
    return total / count if count else 100.0


def context_aware(ctx: Context, search: str) -> Found | None:
    """A block where at least half the non-blank lines are ``CONTEXT_LINE_MIN`` similar.

    Candidate blocks come from lines equal to one of the search's (rarest first), so a block
    with no line in common with the search is never considered. The search is lined up with
    the block (one line may be missing from either) before its lines are counted.
    """
    usable = _fuzzy_lines(search)
    if usable is None:
        return None
    lines, trailing, wanted = usable
    judge = Judge(ctx, "context_aware", lines, wanted)
    places, incomplete = _context_places(judge)
    return _fuzzy_found(places, lines, trailing, incomplete)


def _context_places(judge: Judge) -> tuple[list[Alignment], bool]:
    """The places context_aware accepts, one per place, and whether it stopped short."""
    ctx, lines, wanted = judge.ctx, judge.lines, judge.wanted
    index = ctx.index
    line_count = ctx.doc.line_count
    scored = [offset for offset, key in enumerate(wanted) if key]
    needed = math.ceil(len(scored) * CONTEXT_SHARE)
    votes: dict[int, int] = {}
    drawn = 0
    for offset in sorted(scored, key=lambda o: len(index.lines_with_key(KeyKind.FOLD, wanted[o]))):
        same = index.lines_with_key(KeyKind.FOLD, wanted[offset])
        if drawn and drawn + len(same) > _VOTE_BUDGET:
            break
        drawn += len(same)
        for line in same:
            start = line - offset
            if -GAP_BAND <= start <= line_count - len(lines) + GAP_BAND:
                votes[start] = votes.get(start, 0) + 1
    accepted: dict[tuple[int | None, ...], Alignment] = {}
    incomplete = False
    candidates = sorted(votes, key=lambda start: (-votes[start], start))
    for number, start in enumerate(candidates, 1):
        # A line skipped or written splits a block's votes between two neighbouring starts:
        # only then are lines looked for one line off their offset.
        banded = start - 1 in votes or start + 1 in votes
        if _may_share_enough(judge, start, scored, needed, banded):
            alignment = judge.aligned(start, None)
            if (
                alignment is not None
                and alignment.facing not in accepted
                and _matching(judge, alignment, scored) >= needed
                and judge.usable(alignment)
            ):
                accepted[alignment.facing] = alignment
        if len(accepted) >= _FUZZY_ACCEPT_MAX or judge.spent > _FUZZY_BUDGET:
            incomplete = number < len(candidates)
            break
    return distinct(judge, list(accepted.values())), incomplete


def _may_share_enough(
    judge: Judge, start: int, scored: list[int], needed: int, banded: bool
) -> bool:
    """Whether enough search lines have a similar file line at their offset (or one off)."""
    line_count = judge.ctx.doc.line_count
    drifts = (0, *_GAPS) if banded else (0,)
    wanted, key, ratio = judge.wanted, judge.key, fuzz.ratio
    left = len(scored)
    passed = compared = 0
    for offset in scored:
        left -= 1
        ours = wanted[offset]
        for drift in drifts:
            line = start + offset + drift
            if 0 <= line < line_count:
                compared += 1
                if ratio(ours, key(line), score_cutoff=CONTEXT_LINE_MIN):
                    passed += 1
                    break
        if passed >= needed or passed + left < needed:
            break
    judge.spent += compared
    return passed >= needed


def _matching(judge: Judge, alignment: Alignment, scored: list[int]) -> int:
    """How many non-blank search lines face a file line ``CONTEXT_LINE_MIN`` similar."""
    passed = 0
    for offset in scored:
        line = alignment.facing[offset]
        if line is not None and fuzz.ratio(
            judge.wanted[offset], judge.key(line), score_cutoff=CONTEXT_LINE_MIN
        ):
            passed += 1
    return passed


def _fuzzy_found(
    accepted: list[Alignment], lines: list[str], trailing: bool, incomplete: bool
) -> Found | None:
    if not accepted:
        return None
    accepted.sort(key=lambda alignment: (alignment.start, alignment.end))
    search = "\n".join(lines)
    return Found(
        [alignment.start for alignment in accepted],
        len(lines),
        True,
        search,
        trailing,
        fuzzy=True,
        incomplete=incomplete,
        ends={alignment.start: alignment.end for alignment in accepted},
        aligned={alignment.start: alignment for alignment in accepted},
    )
