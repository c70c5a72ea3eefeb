"""The nine ways the fuzzy matcher looks for a search text, strictest first.

Each strategy returns every place it finds (a ``Found``) or ``None``; the caller stops at the
first that finds anything. The strict ones compare whole lines through a key that ignores a
little more at each step; ``block_anchor`` and ``context_aware`` score similarity and only ever
accept one block.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

from rapidfuzz import fuzz

from neta.errors import InvalidEditError
from neta.fuzzy_match._line_index import KeyKind, LineIndex
from neta.fuzzy_match._text import (
    Document,
    ascii_for,
    is_placeholder,
    key_fold,
    split_lines,
    unescape,
)

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


def _same(text: str) -> str:
    return text


@dataclass(frozen=True)
class Found:
    r"""Every place one strategy found the search.

    Attributes:
        strategy: the strategy's name.
        starts: offsets into ``Document.text``, or 0-based first lines when ``by_lines``.
        size: the length of each match, in characters or (``by_lines``) in lines.
        by_lines: whether matches are runs of whole lines.
        search: the text matched (decoded or trimmed as the strategy needed), ``\n`` endings;
            for ``by_lines`` without its final newline.
        trailing_newline: ``by_lines``: the search ended with a newline, which the match
            includes (when the file has one there).
        adapt_new: turns the replacement into the same form as ``search`` (decoded, trimmed).
        fuzzy: found by similarity, so it must be unique even with ``replace_all``.
        incomplete: the strategy stopped before checking every candidate.
    """

    strategy: str
    starts: list[int]
    size: int
    by_lines: bool
    search: str
    trailing_newline: bool
    adapt_new: Callable[[str], str] = _same
    fuzzy: bool = False
    incomplete: bool = False


@dataclass(frozen=True)
class Context:
    """One search's view of a document.

    Attributes:
        index: the line keys of the document searched.
        overlapping: whether matches overlapping an earlier one count (else left first wins).
        limit: stop collecting matches after this many.
    """

    index: LineIndex
    overlapping: bool = True
    limit: int | None = None

    @property
    def doc(self) -> Document:
        """The document searched."""
        return self.index.doc


Strategy = Callable[[Context, str], "Found | None"]


def _text_starts(
    ctx: Context,
    needle: str,
    *,
    whole_words: bool = False,
    line_start: bool = False,
    line_end: bool = False,
) -> list[int]:
    """Where ``needle`` occurs in the text (never inside an identifier with ``whole_words``).

    ``line_start`` and ``line_end`` ask for occurrences with nothing but whitespace between
    them and the start, or the end, of their line.
    """
    if line_start or line_end:
        return _line_bound_starts(ctx, needle, whole_words, line_start, line_end)
    text = ctx.doc.text
    starts: list[int] = []
    position = text.find(needle)
    while position != -1:
        step = 1
        if not whole_words or _on_word_bounds(text, position, needle):
            starts.append(position)
            if ctx.limit is not None and len(starts) >= ctx.limit:
                break
            step = 1 if ctx.overlapping else len(needle)
        position = text.find(needle, position + step)
    return starts


def _line_bound_starts(
    ctx: Context, needle: str, whole_words: bool, line_start: bool, line_end: bool
) -> list[int]:
    # At most one place per line can start (or end) its line's text, so after a miss the search
    # moves on to the next such place, never visiting every occurrence in a huge line. The
    # needle is trimmed: it neither starts nor ends with whitespace or a line break.
    doc = ctx.doc
    text = doc.text
    starts: list[int] = []
    position = text.find(needle)
    while position != -1:
        line = doc.line_of(position)
        end = position + len(needle)
        end_line = doc.line_of(end) if "\n" in needle else line
        text_start = doc.line_starts[line] + _indent_width(doc.lines[line])
        text_end = doc.line_starts[end_line] + len(doc.lines[end_line].rstrip())
        if (
            (not line_start or position == text_start)
            and (not line_end or end == text_end)
            and (not whole_words or _on_word_bounds(text, position, needle))
        ):
            starts.append(position)
            if ctx.limit is not None and len(starts) >= ctx.limit:
                break
            following = position + (1 if ctx.overlapping else len(needle))
        else:
            following = position + 1
            if line_end and end < text_end:
                following = max(following, text_end - len(needle))
        if line_start:
            following = max(following, doc.line_starts[line + 1])
        position = text.find(needle, following)
    return starts


def _indent_width(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _on_word_bounds(text: str, start: int, needle: str) -> bool:
    """Whether ``needle`` at ``start`` neither begins nor ends inside an identifier."""
    end = start + len(needle)
    if _is_word(needle[0]) and start > 0 and _is_word(text[start - 1]):
        return False
    return not (_is_word(needle[-1]) and end < len(text) and _is_word(text[end]))


def _by_lines(
    name: str,
    ctx: Context,
    search: str,
    kind: KeyKind,
    adapt_new: Callable[[str], str] = _same,
) -> Found | None:
    lines, trailing = split_lines(search)
    if not lines:
        return None
    starts = ctx.index.windows(kind, lines, overlapping=ctx.overlapping, limit=ctx.limit)
    if not starts:
        return None
    return Found(name, starts, len(lines), True, "\n".join(lines), trailing, adapt_new)


def exact(ctx: Context, search: str) -> Found | None:
    """The search occurs verbatim (line endings aside), anywhere, even inside a line."""
    starts = _text_starts(ctx, search)
    return Found("exact", starts, len(search), False, search, False) if starts else None


def line_trimmed(ctx: Context, search: str) -> Found | None:
    """Whole lines equal once trailing whitespace is ignored; indentation must agree."""
    return _by_lines("line_trimmed", ctx, search, KeyKind.RSTRIP)


def whitespace_normalized(ctx: Context, search: str) -> Found | None:
    """Whole lines equal once runs of whitespace inside them count as one space."""
    return _by_lines("whitespace_normalized", ctx, search, KeyKind.WS_INDENT)


def indent_flexible(ctx: Context, search: str) -> Found | None:
    """Whole lines equal once indentation and spacing are ignored (the edit is re-indented)."""
    return _by_lines("indent_flexible", ctx, search, KeyKind.WS)


def escape_normalized(ctx: Context, search: str) -> Found | None:
    r"""The search had ``\n``, ``\t`` or quotes escaped once too often: decode, then match."""
    decoded = unescape(search)
    if decoded == search or not decoded.strip():
        return None
    # A search whose only line breaks are escaped says the replacement's are escaped too.
    adapt = partial(_unescape_like, breaks_escaped="\n" in decoded and "\n" not in search)
    starts = _text_starts(ctx, decoded)
    if starts:
        return Found("escape_normalized", starts, len(decoded), False, decoded, False, adapt)
    return _by_lines("escape_normalized", ctx, decoded, KeyKind.WS, adapt)


def _unescape_like(new: str, *, breaks_escaped: bool) -> str:
    """``new`` decoded as the search was; refused when it is not escaped like the search.

    Raises:
        InvalidEditError: the search escaped its line breaks while ``new`` has real ones and
            escapes as well, so which of its escapes are text cannot be told.
    """
    decoded = unescape(new)
    if breaks_escaped and "\n" in new and decoded != new:
        raise InvalidEditError(
            "old_string was found only once its escapes were decoded (it wrote its line breaks "
            "as \\n), but new_string has real line breaks as well as backslash escapes, so it "
            "is unclear which of them are meant as text. The file was not changed. Send "
            "old_string and new_string with real line breaks, and escapes only where the file "
            "has them."
        )
    return decoded


def trimmed_boundary(ctx: Context, search: str) -> Found | None:
    r"""Leading and trailing blank lines and spaces of the search dropped.

    Inside a line the trimmed text must not start or end within an identifier, so
    ``"  foo  "`` never matches in ``foobar``; and on a side where the search had a line break
    it must start or end its line, so ``"\nreturn x\n"`` never matches in ``return x + 1``.
    """
    core = search.strip()
    if core == search or not core:
        return None
    lead = search[: len(search) - len(search.lstrip())]
    trail = search[len(search.rstrip()) :]
    # A line break around the text says where its line starts or ends: never mid-line there.
    starts = _text_starts(
        ctx, core, whole_words=True, line_start="\n" in lead, line_end="\n" in trail
    )
    if starts:
        adapt = partial(_trim_like, lead=lead, trail=trail)
        return Found("trimmed_boundary", starts, len(core), False, core, False, adapt)
    lines = search.split("\n")
    blank_lead = _count_blank(lines)
    blank_trail = _count_blank(reversed(lines))
    if not blank_lead and not blank_trail:
        return None  # only spaces around the text: indent_flexible already compared these lines
    trimmed = "\n".join(lines[blank_lead : len(lines) - blank_trail])
    adapt = partial(_drop_blank_lines, lead=blank_lead, trail=blank_trail)
    return _by_lines("trimmed_boundary", ctx, trimmed, KeyKind.WS, adapt)


def _count_blank(lines: Iterable[str]) -> int:
    count = 0
    for line in lines:
        if line.strip():
            break
        count += 1
    return count


def _trim_like(new: str, *, lead: str, trail: str) -> str:
    """``new`` without the leading and trailing whitespace it shares with the trimmed search."""
    new_lead = new[: len(new) - len(new.lstrip())]
    new = new[_shared_prefix(lead, new_lead) :]
    new_trail = new[len(new.rstrip()) :]
    return new[: len(new) - _shared_prefix(trail[::-1], new_trail[::-1])]


def _shared_prefix(first: str, second: str) -> int:
    shared = 0
    for one, other in zip(first, second, strict=False):
        if one != other:
            break
        shared += 1
    return shared


def _drop_blank_lines(new: str, *, lead: int, trail: int) -> str:
    """``new`` without up to ``lead`` leading and ``trail`` trailing blank lines."""
    lines = new.split("\n")
    first = min(lead, _count_blank(lines))
    last = len(lines) - min(trail, _count_blank(reversed(lines)), len(lines) - first)
    return "\n".join(lines[first:last])


def unicode_normalized(ctx: Context, search: str) -> Found | None:
    """Whole lines equal once smart quotes, dashes, ellipses and odd spaces read as ASCII.

    Typographic characters of the search that the file never holds are written as ASCII.
    """
    if search.isascii() and ctx.doc.is_ascii:
        return None  # folding would change nothing: indent_flexible already compared
    # A smart quote the model typed that the file never uses would be a typo in the file.
    adapt = partial(_translate, table=ascii_for(search, ctx.doc.text))
    return _by_lines("unicode_normalized", ctx, search, KeyKind.FOLD, adapt)


def _translate(text: str, *, table: dict[int, str]) -> str:
    return text.translate(table)


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
    accepted, incomplete = _score_middles(ctx.index, wanted, candidates)
    return _fuzzy_found("block_anchor", accepted, lines, trailing, incomplete)


def _score_middles(
    index: LineIndex, wanted: list[str], candidates: list[int]
) -> tuple[list[int], bool]:
    """The candidate blocks whose middle lines reach ``BLOCK_MIDDLE_MIN``, and if that is unsure.

    All candidates are scored one middle line at a time, and a candidate is dropped as soon as
    its mean can no longer reach the minimum. When the comparisons exceed the budget while many
    candidates survive, those survivors are returned as unsure.
    """
    key = index.key_getter(KeyKind.FOLD)
    alive = candidates
    totals = [0.0] * len(alive)
    counts = [0] * len(alive)
    written_left = sum(1 for wanted_key in wanted[1:-1] if wanted_key)
    spent = 0
    for offset in range(1, len(wanted) - 1):
        if len(alive) <= _FUZZY_ACCEPT_MAX:
            # Few survivors left: finishing them one by one is cheaper than column by column.
            finished = zip(alive, totals, counts, strict=True)
            return [
                start
                for start, total, count in finished
                if _final_mean(key, wanted, start, offset, total, count) >= BLOCK_MIDDLE_MIN
            ], False
        if spent > _FUZZY_BUDGET:
            return alive, True
        spent += len(alive)
        facing = [key(start + offset) for start in alive]
        if wanted[offset]:
            written_left -= 1
            line_key = wanted[offset]
            totals = [
                total + fuzz.ratio(line_key, theirs)
                for total, theirs in zip(totals, facing, strict=True)
            ]
            counts = [count + 1 for count in counts]
        else:
            counts = [
                count + (1 if theirs else 0) for count, theirs in zip(counts, facing, strict=True)
            ]
        # Lines still to come add at most 100 each, and blank ones only lower the mean.
        best = 100.0 * written_left
        keep = [
            position
            for position, (total, count) in enumerate(zip(totals, counts, strict=True))
            if total + best >= BLOCK_MIDDLE_MIN * (count + written_left)
        ]
        if len(keep) < len(alive):
            alive = [alive[position] for position in keep]
            totals = [totals[position] for position in keep]
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
    return _fuzzy_found("context_aware", sorted(accepted), lines, trailing, incomplete)


def _fuzzy_found(
    name: str, accepted: list[int], lines: list[str], trailing: bool, incomplete: bool
) -> Found | None:
    if not accepted:
        return None
    search = "\n".join(lines)
    return Found(
        name, accepted, len(lines), True, search, trailing, fuzzy=True, incomplete=incomplete
    )


def exact_words(ctx: Context, search: str) -> Found | None:
    """Like ``exact``, but never starting or ending inside an identifier."""
    starts = _text_starts(ctx, search, whole_words=True)
    return Found("exact", starts, len(search), False, search, False) if starts else None


STRICT: tuple[Strategy, ...] = (
    exact,
    line_trimmed,
    whitespace_normalized,
    indent_flexible,
    escape_normalized,
    trimmed_boundary,
    unicode_normalized,
)
"""The strategies that only ever match text equal to the search up to a normalisation."""

ALL: tuple[Strategy, ...] = (*STRICT, block_anchor, context_aware)
"""Every strategy, in the order they are tried."""

PRESENCE: tuple[Strategy, ...] = (
    exact_words,
    line_trimmed,
    whitespace_normalized,
    indent_flexible,
    trimmed_boundary,
    unicode_normalized,
)
"""The strategies telling whether a replacement is already in a file (not as part of a word)."""


def first_found(ctx: Context, search: str, strategies: tuple[Strategy, ...] = ALL) -> Found | None:
    """What the first strategy that finds anything found, or None."""
    for strategy in strategies:
        found = strategy(ctx, search)
        if found is not None:
            return found
    return None
