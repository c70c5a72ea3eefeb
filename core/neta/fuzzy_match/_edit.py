"""Where a match lies in the text, and the spans of it an edit replaces with what.

Matches inside the text are replaced as found (a match inside a line written onto the file's
own characters); matches of whole lines are merged onto the file's lines (see ``_merge``),
a block re-indented by one shift without a diff at all.
"""

from __future__ import annotations

from collections.abc import Sequence

from neta.errors import NoMatchError
from neta.fuzzy_match._align import Alignment
from neta.fuzzy_match._diff import Opcode, line_diff
from neta.fuzzy_match._inline import keep_file_chars
from neta.fuzzy_match._merge import StaleLineError, merge, shifted_whole
from neta.fuzzy_match._messages import repeated_edge, stale_line, unplaced_margin
from neta.fuzzy_match._nesting import nesting_conflict
from neta.fuzzy_match._strategies import Found
from neta.fuzzy_match._text import Document, key_ws, split_lines


def span(doc: Document, found: Found, start: int) -> tuple[int, int]:
    """Where one match lies in ``doc.text``."""
    if not found.by_lines:
        return start, found.end_of(start)
    last = found.end_of(start) - 1
    end = doc.line_end(last)
    if found.trailing_newline and doc.has_newline_after(last):
        end += 1
    return doc.line_starts[start], end


def line_range(doc: Document, found: Found, start: int) -> tuple[int, int]:
    """The first and last line (1-based) of one match; a matched empty last line counts."""
    if found.by_lines:
        return start + 1, found.end_of(start)
    return doc.line_of(start) + 1, doc.line_of(max(start, found.end_of(start) - 1)) + 1


def first_line(doc: Document, found: Found, start: int) -> int:
    return (start if found.by_lines else doc.line_of(start)) + 1


def _text_edit(doc: Document, found: Found, start: int, new: str) -> tuple[int, int, str]:
    """The edit of one place found in the text (not as whole lines)."""
    end = found.end_of(start)
    if found.restyle:
        new = keep_file_chars(doc.text[start:end], found.search, new)
    # Blank lines new adds after whole lines come out as when a strategy matching whole lines
    # finds them: new's final newline ends its last line. (A single final newline is kept, as
    # str.replace would: it is the one difference the line strategies forgive.)
    line_start = doc.line_starts[doc.line_of(start)]
    whole_lines = doc.text[end : end + 1] == "\n" and not doc.text[line_start:start].strip()
    if whole_lines and new.endswith("\n\n") and not found.search.endswith("\n"):
        new = new[:-1]
    return start, end, new


_KEEPS_INDENTATION = frozenset({"exact", "line_trimmed", "whitespace_normalized"})
"""Strategies that compare lines with their indentation: a line found is at its depth."""


def _edge_repeated(doc: Document, start: int, end: int) -> bool:
    """Whether the file repeats the block's first line before it or its last line after it."""
    before = start > 0 and key_ws(doc.lines[start - 1]) == key_ws(doc.lines[start])
    after = end < doc.line_count and key_ws(doc.lines[end]) == key_ws(doc.lines[end - 1])
    return before or after


def _edge_readings(
    doc: Document, old_lines: Sequence[str], start: int, end: int, opcodes: Sequence[Opcode]
) -> list[tuple[int, list[int | None]]]:
    """Other ways the search reads onto the file at an edge the edit touches.

    Matched with indentation ignored, a block whose last lines the file repeats right after
    it (``})`` after ``})``) reads as well one line further down, past a line the model
    skipped; likewise at its start. Each reading is its block's first line and what each
    search line faces, kept only where the search's indentation agrees with it.
    """
    readings: list[tuple[int, list[int | None]]] = []
    count = len(old_lines)
    keys = [key_ws(line) for line in old_lines]
    if opcodes[-1][0] != "equal" and end < doc.line_count:
        run = count  # the search lines from here on read one line further down too
        while run > 1 and keys[run - 1] == key_ws(doc.lines[start + run]):
            run -= 1
        if run < count:
            readings.append((start, [*range(run), *range(run + 1, count + 1)]))
    if opcodes[0][0] != "equal" and start > 0:
        run = 0  # the search lines up to here read one line further up too
        while run < count - 1 and keys[run] == key_ws(doc.lines[start + run - 1]):
            run += 1
        if run:
            readings.append((start - 1, [*range(run), *range(run + 1, count + 1)]))
    kept = []
    unit, step = (lambda: doc.indent_unit), (lambda: doc.indent_step)
    for first, facing in readings:
        block = [doc.lines[first + at] if at is not None else "" for at in facing]
        if nesting_conflict(old_lines, block, range(count), unit, step, halves=True) is None:
            kept.append((first, facing))
    return kept


def _check_edges(
    doc: Document,
    found: Found,
    start: int,
    merged: list[str],
    new_lines: list[str],
    opcodes: Sequence[Opcode],
) -> None:
    """Refuse an edit at a block's edge that comes out otherwise on another reading of it."""
    old_lines = found.search.split("\n")
    end = found.end_of(start)
    for first, facing in _edge_readings(doc, old_lines, start, end, opcodes):
        block = doc.lines[first : first + len(old_lines) + 1]
        around = [*doc.lines[first:start], *merged, *doc.lines[end : first + len(block)]]
        try:
            other = merge(old_lines, new_lines, block, opcodes, facing, tabs=doc.indents_with_tabs)
        except StaleLineError:
            other = None
        if other != around:
            inside, outside = (end - 1, end) if first == start else (start, start - 1)
            raise NoMatchError(repeated_edge(doc, found, start, inside, outside))


def _check_margins(doc: Document, found: Found, start: int, opcodes: list[Opcode]) -> None:
    """Refuse text added next to blank lines the search has around a block and the file lacks.

    The search said the new text goes between its blank lines and the block; where the file
    has another line there, the model skipped it, and which side of it the text goes on
    cannot be told.
    """
    above, below = found.margins
    first, last = line_range(doc, found, start)
    claimed: list[int] = []  # the file lines, 0-based, where the search has blank lines
    if above and _adds_lines(opcodes[0]):
        claimed += range(first - 2, first - 2 - above, -1)
    if below and _adds_lines(opcodes[-1]):
        claimed += range(last, last + below)
    for line in claimed:
        if 0 <= line < doc.line_count and doc.lines[line].strip():
            raise NoMatchError(unplaced_margin(doc, found, (first - 1, last), line))


def _adds_lines(opcode: Opcode) -> bool:
    """Whether a stretch of the diff writes more lines than it replaces: some are added."""
    tag, old_from, old_to, new_from, new_to = opcode
    return tag != "equal" and new_to - new_from > old_to - old_from


def _merged_aligned(
    doc: Document,
    found: Found,
    start: int,
    alignment: Alignment,
    new_lines: list[str],
    opcodes: list[Opcode],
) -> list[str]:
    """The lines replacing a block that the search faces with a line more or fewer.

    The edit must come out the same whichever of the equally good alignments is taken (a
    skipped ``}`` among three may be any of them); else it is refused.
    """
    old_lines = found.search.split("\n")
    block = doc.lines[start : alignment.end]
    results = []
    for facing in alignment.every:
        relative = [None if line is None else line - start for line in facing]
        try:
            merged = merge(
                old_lines, new_lines, block, opcodes, relative, tabs=doc.indents_with_tabs
            )
            results.append(merged)
        except StaleLineError as exc:
            raise NoMatchError(stale_line(doc, found, start, exc, relative)) from None
    if any(result != results[0] for result in results):
        every = alignment.every
        offsets = [
            offset
            for offset in range(len(old_lines))
            if len({facing[offset] for facing in every}) > 1
        ]
        block_lines = set(range(alignment.end - start))
        skipped = sorted(
            set().union(
                *(
                    block_lines - {line - start for line in facing if line is not None}
                    for facing in every
                )
            )
        )
        relative = [None if line is None else line - start for line in alignment.facing]
        unsure = StaleLineError(offsets, "skipped", skipped)
        raise NoMatchError(stale_line(doc, found, start, unsure, relative))
    return results[0]


def edits(doc: Document, found: Found, new: str) -> list[tuple[int, int, str]]:
    """The ``(start, end, replacement)`` spans of ``doc.text`` the edit replaces."""
    adapted = found.adapt_new(new)
    old_lines = found.search.split("\n")
    new_lines = split_lines(adapted)[0] if found.by_lines else adapted.split("\n")
    opcodes: list[Opcode] | None = None
    if found.margins != (0, 0):
        opcodes = line_diff(old_lines, new_lines)
        for start in found.starts:
            _check_margins(doc, found, start, opcodes)
    if not found.by_lines:
        return [_text_edit(doc, found, start, adapted) for start in found.starts]
    # replace_all often finds the same block many times: it is merged once.
    done: dict[tuple[str, ...], list[str]] = {}
    edits = []
    for start in found.starts:
        last = found.end_of(start) - 1
        block = doc.lines[start : last + 1]
        alignment = found.aligned.get(start) if found.aligned else None
        merged: list[str] | None
        if alignment is not None and not alignment.positional:
            if opcodes is None:
                opcodes = line_diff(old_lines, new_lines)
            merged = _merged_aligned(doc, found, start, alignment, new_lines, opcodes)
        else:
            merged = done.get(tuple(block))
        if merged is None:
            shifted = (
                None
                if block == old_lines
                else shifted_whole(old_lines, new_lines, block, tabs=doc.indents_with_tabs)
            )
            if block == old_lines:
                merged = new_lines
            elif shifted is not None:
                merged = shifted
            else:
                if opcodes is None:
                    opcodes = line_diff(old_lines, new_lines)
                try:
                    merged = merge(old_lines, new_lines, block, opcodes, tabs=doc.indents_with_tabs)
                except StaleLineError as exc:
                    raise NoMatchError(stale_line(doc, found, start, exc)) from None
            done[tuple(block)] = merged
        if (
            found.strategy not in _KEEPS_INDENTATION
            and (alignment is None or alignment.positional)
            and _edge_repeated(doc, start, last + 1)
        ):
            if opcodes is None:
                opcodes = line_diff(old_lines, new_lines)
            _check_edges(doc, found, start, merged, new_lines, opcodes)
        # Whole lines replace whole lines: a final newline that only one of old and new has
        # neither joins the next line onto the last one nor adds a blank line.
        line_start = doc.line_starts[start]
        if merged:
            edits.append((line_start, doc.line_end(last), "\n".join(merged)))
        elif doc.has_newline_after(last):
            edits.append((line_start, doc.line_starts[last + 1], ""))
        else:
            edits.append((line_start, doc.line_end(last), ""))
    return edits
