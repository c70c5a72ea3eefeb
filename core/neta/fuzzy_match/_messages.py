"""The messages of refused edits. A model reads them, so each says what to do next.

A message names lines by their 1-based number in the file and shows whitespace visibly
(``·`` a space, ``→`` a tab), since a whitespace difference is invisible otherwise.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence

from rapidfuzz import fuzz, process

from neta.fuzzy_match._indent import indent_of, width
from neta.fuzzy_match._line_index import KeyKind, LineIndex
from neta.fuzzy_match._merge import StaleLineError
from neta.fuzzy_match._strategies import Found, NearMiss
from neta.fuzzy_match._text import Document, key_fold, key_ws, split_lines, visible

_SHOWN_LINES = 6
"""Differing lines shown for the closest block."""

_SHOWN_CHARS = 100
"""Longer lines are cut to this many characters around their first difference."""

_SHOWN_PLACES = 10
"""Line numbers listed for an ambiguous match."""

_VOTING_LINES = 200
"""Search lines looked up exactly when looking for the closest block."""

_COMMON_LINE = 20
"""A line found more often than this says nothing about where the search belongs."""

_WORD = re.compile(r"\w+")

_RETRY = (
    "Re-read the file, then copy old_string exactly from it (without line-number prefixes or "
    '"..." placeholders), with enough surrounding lines to match one place.'
)


def describe(theirs: str, ours: str) -> str:
    """What differs between the file's line and the search's, in a few words."""
    if theirs.rstrip() == ours.rstrip():
        return "trailing whitespace differs"
    if theirs.strip() == ours.strip():
        return "indentation differs"
    if key_ws(theirs) == key_ws(ours):
        return "spacing differs"
    if key_fold(theirs) == key_fold(ours):
        return "quotes, dashes or special spaces differ"
    their_text, our_text = theirs.lstrip(), ours.lstrip()
    indents_differ = theirs[: len(theirs) - len(their_text)] != ours[: len(ours) - len(our_text)]
    if indents_differ and their_text and our_text:
        after = _first_difference(their_text, our_text) + 1
        return f"indentation differs, and the text differs from character {after} after it"
    return f"text differs from column {_first_difference(theirs, ours) + 1}"


def _first_difference(first: str, second: str) -> int:
    for column, (one, other) in enumerate(zip(first, second, strict=False)):
        if one != other:
            return column
    return min(len(first), len(second))


def _clip(text: str, column: int) -> str:
    if not text:
        return "(empty line)"
    if len(text) <= _SHOWN_CHARS:
        return visible(text)
    start = max(0, min(column - _SHOWN_CHARS // 3, len(text) - _SHOWN_CHARS))
    end = start + _SHOWN_CHARS
    cut = visible(text[start:end])
    return ("\u2026" if start else "") + cut + ("\u2026" if end < len(text) else "")


def _pair(label: str, theirs: str | None, ours: str) -> list[str]:
    if theirs is None:
        return [f"- {label}: the file ends before this line", f"    old_string: {_clip(ours, 0)}"]
    column = _first_difference(theirs, ours)
    return [
        f"- {label} ({describe(theirs, ours)})",
        f"    file:       {_clip(theirs, column)}",
        f"    old_string: {_clip(ours, column)}",
    ]


def _places(lines: Sequence[int]) -> str:
    counts: dict[int, int] = {}
    for line in lines:
        counts[line] = counts.get(line, 0) + 1
    shown = [
        f"{line} ({count} places in that line)" if count > 1 else str(line)
        for line, count in list(counts.items())[:_SHOWN_PLACES]
    ]
    more = len(counts) - len(shown)
    if more:
        return ", ".join(shown) + f" and {more} more"
    return ", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else shown[0]


def ambiguous(
    found: Found,
    lines: Sequence[int],
    separate: Sequence[int],
    *,
    replace_all: bool,
    capped: bool,
) -> str:
    """The message for a search found at several places (``lines`` 1-based).

    ``separate`` are the places ``replace_all`` would replace (leftmost first where places
    overlap); ``capped`` says the search stopped counting, so there may be more places.
    """
    where = _places(lines)
    if found.incomplete:
        return (
            f"old_string was not found exactly, and it resembles too many places to tell which "
            f"one you mean (strategy {found.strategy}; candidates start at lines {where}). The "
            f"file was not changed. {_RETRY}"
        )
    count = f"at least {len(lines)}" if capped else str(len(lines))
    if found.fuzzy:
        return (
            f"old_string was not found exactly, and {count} places resemble it "
            f"(strategy {found.strategy}), starting at lines {where}. An approximate match "
            "must be unique, so the file was not changed"
            + (" (replace_all only applies to exact matches)" if replace_all else "")
            + f". {_RETRY}"
        )
    advice = (
        "The file was not changed. Include more surrounding lines in old_string so it matches "
        "only the place you mean, or set replace_all to true to replace every one."
    )
    if len(separate) == len(lines):
        return (
            f"old_string matches {count} places (strategy {found.strategy}), starting at lines "
            f"{where}. {advice}"
        )
    if len(separate) == 1:
        # Every occurrence counted starts inside the first: one stretch of repeated text.
        stretch = (
            f"the first {len(lines)} of them (counting stopped there) all overlap the first"
            if capped
            else "every occurrence overlaps the first"
        )
        replaced = (
            "" if capped else f" replace_all would replace 1 of them, the first (line {lines[0]})."
        )
        return (
            f"old_string occurs {count} times (strategy {found.strategy}), starting at lines "
            f"{where}, and {stretch}: they are one stretch of repeated text, not separate "
            f"places.{replaced} The file was not changed. Include a line before or after the "
            "repeated text in old_string so that it matches only the place you mean."
        )
    at_least = "at least " if capped else ""
    return (
        f"old_string matches {at_least}{len(separate)} places (strategy {found.strategy}), "
        f"starting at lines {_places(separate)}, and its occurrences overlap: counting every "
        f"starting position gives {count}. replace_all would replace {at_least}"
        f"{len(separate)} of them, the leftmost where two overlap. {advice}"
    )


_STALE_REASONS = {
    "changed": "a line your edit changes or removes is not the file's. Lines you keep may "
    "differ a little (the file's text is kept), but lines you change must be copied exactly",
    "repeated": "new_string adds a copy of a line of old_string that is not the file's, so "
    "that stale text would be written. Copy the line exactly as the file has it",
    "placed": "the lines around the place where new_string adds or removes text are not the "
    "file's, so that place is uncertain. Copy the lines next to your change exactly",
    "indent": "new_string adds a line between two lines that old_string indents unlike the "
    "file (its indentation maps to the file's differently for each), so neither the added "
    "line's indentation nor the block it belongs to can be told. Copy old_string with the "
    "file's indentation, or include the lines around the addition as the file has them",
    "skipped": "the file has a line that old_string skips right where your edit writes, so "
    "whether the new text goes before or after it cannot be told. Include that line in "
    "old_string (and in new_string where it belongs)",
}


def stale_line(
    doc: Document,
    found: Found,
    start: int,
    error: StaleLineError,
    facing: Sequence[int | None] | None = None,
) -> str:
    """The message for a fuzzy block whose lines at ``error.offsets`` the edit cannot rely on.

    ``facing`` says which block line (relative to ``start``) each search line faces; by
    default the one at its own offset.
    """
    search = found.search.split("\n")
    shown: list[str] = []
    for offset in error.offsets[:_SHOWN_LINES]:
        at = offset if facing is None else facing[offset]
        ours = search[offset]
        if at is None:
            shown += [f"- old_string's line {offset + 1} (the file has no such line there)"]
            shown += [f"    old_string: {_clip(ours, 0)}"]
            continue
        theirs = doc.lines[start + at]
        if theirs == ours:
            shown += [f"- line {start + at + 1} (the same in the file and old_string)"]
            shown += [f"    file:       {_clip(theirs, 0)}"]
        else:
            shown += _pair(f"line {start + at + 1}", theirs, ours)
    for at in error.skipped[:_SHOWN_LINES]:
        shown += [f"- line {start + at + 1} (old_string skips it)"]
        shown += [f"    file:       {_clip(doc.lines[start + at], 0)}"]
    end = found.end_of(start)
    return "\n".join(
        [
            f"old_string matched only approximately (strategy {found.strategy}, lines "
            f"{start + 1}-{end}), and {_STALE_REASONS[error.reason]}. The file was not "
            "changed.",
            *shown,
            _RETRY,
        ]
    )


def unplaced_margin(doc: Document, found: Found, lines: tuple[int, int], line: int) -> str:
    """The message for text added next to a blank line of the search the file lacks there.

    ``lines`` are the first (0-based) and the line after the last that the search matched.
    """
    start, end = lines
    where = "before" if line < start else "after"
    return "\n".join(
        [
            f"old_string matched lines {start + 1}-{end} (strategy "
            f"{found.strategy}) once its blank lines {where} them were set aside, but the file "
            f"has line {line + 1} where old_string has a blank line, and new_string adds text "
            "right there: whether the file's line goes before or after the new text cannot be "
            "told. The file was not changed.",
            f"- line {line + 1} (old_string has a blank line here)",
            f"    file:       {_clip(doc.lines[line], 0)}",
            "Include that line in old_string (and in new_string where it belongs), or leave "
            "the blank lines out of both.",
        ]
    )


def repeated_edge(doc: Document, found: Found, start: int, inside: int, outside: int) -> str:
    """The message for an edit at a block's edge line that the file repeats just outside it."""
    where = "after" if outside > inside else "before"
    return "\n".join(
        [
            f"old_string matched lines {start + 1}-{found.end_of(start)} (strategy "
            f"{found.strategy}) with its indentation ignored, and your edit changes or adds "
            f"text at line {inside + 1}; but the file has the same line again right {where} "
            f"it (line {outside + 1}), and old_string reads as well onto that one, past a line "
            "it would skip: which of the two it means, and so where the edit goes, cannot be "
            "told. The file was not changed.",
            f"    file:       {_clip(doc.lines[inside], 0)}",
            f"    file:       {_clip(doc.lines[outside], 0)}",
            "Copy old_string with the file's own indentation, and include every line it spans.",
        ]
    )


def nested_unlike(doc: Document, search: str, miss: NearMiss) -> str:
    """The message for a search found only where a line of it is nested unlike the search's."""
    lines = search.split("\n")
    assert miss.offset is not None
    assert miss.line is not None
    assert miss.reference is not None
    assert miss.reference_line is not None
    ours = _columns(lines[miss.offset]) - _columns(lines[miss.reference])
    theirs = _columns(doc.lines[miss.line]) - _columns(doc.lines[miss.reference_line])
    shown: list[str] = []
    for offset, line in ((miss.reference, miss.reference_line), (miss.offset, miss.line)):
        shown += [
            f"- line {line + 1}, old_string's line {offset + 1}",
            f"    file:       {_clip(doc.lines[line], 0)}",
            f"    old_string: {_clip(lines[offset], 0)}",
        ]
    how = (
        f"old_string indents it {_relative(ours)} its line {miss.reference + 1}, the file "
        f"{_relative(theirs)} line {miss.reference_line + 1}. So it belongs to another block"
    )
    if ours == theirs:
        # Indented with half the file's unit, the search's columns count twice.
        how = (
            f"old_string indents it {_relative(ours)} its line {miss.reference + 1}, but its "
            "indentation reads as half the file's unit too, and so read it sits "
            f"{_relative(2 * ours)} line {miss.reference_line + 1}. So it may belong to another "
            "block"
        )
    return "\n".join(
        [
            "old_string was not found as written. With indentation ignored it matches lines "
            f"{miss.start + 1}-{miss.end} (strategy {miss.strategy}), but there line "
            f"{miss.line + 1} is nested unlike old_string's line {miss.offset + 1}: {how}: a "
            "closing line would close the wrong one, and text added next to it would land at "
            "the wrong depth. The file was not changed.",
            *shown,
            "Copy old_string with the file's own indentation, and include every line it spans "
            "(a closing line among several is easily skipped).",
        ]
    )


def _columns(line: str) -> int:
    """The columns a line is indented by, tabs counted as 4."""
    return width(indent_of(line), 4)


def _relative(columns: int) -> str:
    if not columns:
        return "as deep as"
    return f"{abs(columns)} columns {'deeper than' if columns > 0 else 'shallower than'}"


def already_applied(line: int) -> str:
    """The message for an old_string that is gone while new_string is present."""
    return (
        f"old_string was not found, but new_string is already in the file (line {line}): the "
        "edit looks already applied, so the file was not changed. Re-read the file before "
        "editing it again."
    )


def placeholder(line: str) -> str:
    """The message for an unmatched old_string that elides code."""
    return (
        f"old_string was not found, and it contains the placeholder line {line.strip()!r}. "
        "old_string must be the file's real text: copy every line it spans instead of "
        "abbreviating with '...', or split the edit into smaller ones. The file was not changed."
    )


def elided_in_new(line: str, dropped: int) -> str:
    """The message for a new_string that abbreviates ``dropped`` lines of old_string."""
    return (
        f"new_string has the placeholder line {line.strip()!r} where old_string has "
        f"{dropped} {'line' if dropped == 1 else 'lines'}. new_string is written as it is, so "
        f"{'that line' if dropped == 1 else 'those lines'} would be deleted. "
        "The file was not changed. Write out every line new_string keeps, or make smaller "
        "edits that leave those lines out of both old_string and new_string; if the line is "
        "meant literally, delete the lines in one edit and add it in another."
    )


def no_match(index: LineIndex, search: str, resembling: NearMiss | None = None) -> str:
    """The message for a search no strategy found: where the closest text is and how it differs.

    ``resembling`` is a block a similarity strategy set aside for sharing only boilerplate
    with the search, which the message names.
    """
    lines, _ = split_lines(search)
    head = (
        "old_string was not found in the file, not even ignoring whitespace, indentation, "
        "escaping or typographic quotes. The file was not changed."
    )
    if resembling is not None:
        head += (
            f" Lines {resembling.start + 1}-{resembling.end} resemble it, but share no more "
            "with it than braces, blank lines, keywords, lines the file repeats and one line "
            "of text: too little to tell they are the place you mean."
        )
    closest = _closest_block(index, lines)
    written = [line for line in lines if line.strip()]
    if len(written) == 1 and (closest is None or closest[1] < 90.0):
        in_line = _closest_in_long_line(index, written[0])
        if in_line is not None and (closest is None or in_line[0] > closest[1]):
            return "\n".join([head, in_line[1], _RETRY])
    if closest is None or closest[1] < 40.0:
        return "\n".join([head, "Nothing in the file resembles it.", _RETRY])
    start, score = closest
    doc = index.doc
    shown: list[str] = []
    differing = 0
    for offset, ours in enumerate(lines):
        number = start + offset
        theirs = doc.lines[number] if 0 <= number < doc.line_count else None
        if theirs == ours:
            continue
        differing += 1
        if differing <= _SHOWN_LINES:
            shown += _pair(f"line {number + 1}", theirs, ours)
    first, last = max(start, 0) + 1, min(start + len(lines), doc.line_count)
    if len(lines) == 1:
        where = f"The closest text is line {first} ({int(score)}% similar)"
    else:
        where = (
            f"The closest text is at lines {first}-{last} ({int(score)}% similar); {differing} "
            f"of old_string's {len(lines)} lines differ"
        )
    summary = f"{where} (whitespace shown as \u00b7 for a space and \u2192 for a tab):"
    if differing > _SHOWN_LINES:
        shown.append(f"- ... and {differing - _SHOWN_LINES} more differing lines")
    return "\n".join([head, summary, *shown, _RETRY])


def _closest_block(index: LineIndex, lines: Sequence[str]) -> tuple[int, float] | None:
    """The first line (0-based, may be off the file's ends) and score of the likeliest block."""
    keys = index.keys(KeyKind.WS)
    wanted = [key_ws(line) for line in lines]
    scored = [offset for offset, key in enumerate(wanted) if key]
    if not keys or not scored:
        return None
    votes: dict[int, float] = {}
    for offset in scored[:_VOTING_LINES]:
        same = index.lines_with_key(KeyKind.WS, wanted[offset])
        if len(same) <= _COMMON_LINE:
            for line in same:
                votes[line - offset] = votes.get(line - offset, 0.0) + 1.0
    for offset in sorted(scored, key=lambda o: -len(wanted[o]))[:3]:
        for _, score, line in process.extract(
            wanted[offset], keys, scorer=fuzz.ratio, limit=3, score_cutoff=50
        ):
            votes[line - offset] = votes.get(line - offset, 0.0) + score / 100.0
    if not votes:
        return None

    def block_score(start: int) -> float:
        total = 0.0
        for offset in scored:
            line = start + offset
            total += fuzz.ratio(wanted[offset], keys[line]) if 0 <= line < len(keys) else 0.0
        return total / len(scored)

    likeliest = heapq.nlargest(5, votes, key=lambda start: (votes[start], -start))
    return max(((start, block_score(start)) for start in likeliest), key=lambda pair: pair[1])


def _closest_in_long_line(index: LineIndex, search: str) -> tuple[float, str] | None:
    """Where a one-line search best aligns inside a longer line, described.

    Only a few lines are tried: those holding the search's longest word, and the longest
    lines (a minified file is one huge line).
    """
    wanted = search.strip()
    doc = index.doc
    words = _WORD.findall(wanted)
    tried = set(index.lines_with_token(max(words, key=len), limit=5)) if words else set()
    tried.update(heapq.nlargest(3, range(doc.line_count), key=lambda line: len(doc.lines[line])))
    best: tuple[float, int, int, int] | None = None
    for line in sorted(tried):
        if len(doc.lines[line]) <= len(wanted):
            continue
        found = fuzz.partial_ratio_alignment(wanted, doc.lines[line], score_cutoff=60)
        if found is not None and (best is None or found.score > best[0]):
            best = (found.score, line, found.dest_start, found.dest_end)
    if best is None:
        return None
    score, line, start, end = best
    theirs = doc.lines[line][start:end]
    if theirs == wanted:
        # Only a fragment of a word or a line can be verbatim and still not have matched.
        whole = doc.lines[line]
        in_word = any(
            0 < edge < len(whole) and _WORD.fullmatch(whole[edge - 1 : edge + 1]) is not None
            for edge in (start, end)
        )
        part = (
            "part of a longer word, at column {column}; include the whole word"
            if in_word
            else "part of a longer line, at column {column}, while the line breaks around "
            "old_string say it is a whole line; include the whole line"
        )
        text = "\n".join(
            [
                f"Line {line + 1} holds old_string (without its surrounding whitespace) only as "
                + part.format(column=start + 1)
                + ":",
                f"    file:       {_clip(whole, start)}",
            ]
        )
        return score, text
    column = _first_difference(theirs, wanted)
    text = "\n".join(
        [
            f"The closest text is inside line {line + 1}, columns {start + 1}-{end} "
            f"({int(score)}% similar); it differs from old_string at column {start + column + 1} "
            "(whitespace shown as \u00b7 for a space and \u2192 for a tab):",
            f"    file:       {_clip(theirs, column)}",
            f"    old_string: {_clip(wanted, column)}",
        ]
    )
    return score, text
