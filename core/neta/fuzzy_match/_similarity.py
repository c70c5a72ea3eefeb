"""The two strategies that match by similarity: ``block_anchor`` and ``context_aware``.

They run only after every strict strategy found nothing, score lines with ``rapidfuzz``, and
accept a block only when exactly one qualifies; what the edit may then change is checked line
by line when it is merged onto the file (see ``_merge``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from rapidfuzz import fuzz

from neta.fuzzy_match._indent import indent_of, width
from neta.fuzzy_match._line_index import KeyKind, LineIndex
from neta.fuzzy_match._strategies import Context, Found
from neta.fuzzy_match._text import is_placeholder, key_fold, split_lines

BLOCK_MIDDLE_MIN = 60.0
"""block_anchor: the least mean similarity (0-100) of the lines between the two anchors."""

CONTEXT_LINE_MIN = 80.0
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

    Every line between the anchors is scored, and their mean must reach ``BLOCK_MIDDLE_MIN``.
    A blank line facing a blank line is left out of the mean; a blank line facing text scores
    0. The block has as many lines as the search.
    """
    usable = _fuzzy_lines(search)
    if usable is None or not usable[0][0].strip() or not usable[0][-1].strip():
        return None
    lines, trailing, wanted = usable
    candidates = ctx.index.windows(KeyKind.FOLD, lines, checked=(0, len(lines) - 1))
    candidates = _anchors_nested_alike(ctx.doc.lines, lines, candidates)
    accepted, incomplete = _score_middles(ctx.index, wanted, candidates)
    return _fuzzy_found(accepted, lines, trailing, incomplete)


def _sign(number: int) -> int:
    return (number > 0) - (number < 0)


def _anchors_nested_alike(
    file_lines: Sequence[str], lines: Sequence[str], candidates: list[int]
) -> list[int]:
    """The candidates whose last anchor is nested relative to their first as the search's is.

    Deeper, level or shallower alike; a search whose lines are all indented alike (flattened)
    says nothing, and keeps every candidate.
    """
    depths = {width(indent_of(line), 4) for line in lines if line.strip()}
    if len(depths) < 2:
        return candidates
    ours = _sign(width(indent_of(lines[-1]), 4) - width(indent_of(lines[0]), 4))
    last = len(lines) - 1
    return [
        start
        for start in candidates
        if _sign(
            width(indent_of(file_lines[start + last]), 4) - width(indent_of(file_lines[start]), 4)
        )
        == ours
    ]


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
    with no line in common with the search is never considered.
    """
    usable = _fuzzy_lines(search)
    if usable is None:
        return None
    lines, trailing, wanted = usable
    index = ctx.index
    last_start = ctx.doc.line_count - len(lines)
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
            if 0 <= line - offset <= last_start:
                votes[line - offset] = votes.get(line - offset, 0) + 1
    accepted: list[int] = []
    spent = 0
    incomplete = False
    key = index.key_getter(KeyKind.FOLD)
    candidates = sorted(votes, key=lambda start: (-votes[start], start))
    for number, start in enumerate(candidates, 1):
        passed = 0
        for done, offset in enumerate(scored, 1):
            if fuzz.ratio(wanted[offset], key(start + offset), score_cutoff=CONTEXT_LINE_MIN):
                passed += 1
            if passed + len(scored) - done < needed:
                break
        else:
            accepted.append(start)
        spent += done
        if len(accepted) >= _FUZZY_ACCEPT_MAX or spent > _FUZZY_BUDGET:
            incomplete = number < len(candidates)
            break
    return _fuzzy_found(sorted(accepted), lines, trailing, incomplete)


def _fuzzy_found(
    accepted: list[int], lines: list[str], trailing: bool, incomplete: bool
) -> Found | None:
    if not accepted:
        return None
    search = "\n".join(lines)
    return Found(accepted, len(lines), True, search, trailing, fuzzy=True, incomplete=incomplete)
