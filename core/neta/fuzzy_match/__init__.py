r"""Find and replace text as a model quotes it: nearly right, and never written back wrong.

A model copying a piece of a file gets the words right and the details wrong: trailing spaces,
indentation, an escaped newline, a smart quote, a stale line. The matcher tries nine strategies,
strictest first, and the first that finds anything decides (a looser one is never consulted
after a stricter one found something, not even to break a tie):

``exact``
    The text occurs verbatim (``\r\n`` and ``\n`` compare equal), anywhere. A unique match is
    settled with ``str.find`` on the content as given, before any other work.
``line_trimmed``
    Whole lines, equal once trailing whitespace is ignored.
``whitespace_normalized``
    Whole lines with the same indentation, equal once runs of spaces and tabs count as one;
    or a one-line search inside a line, whitespace between its tokens off (``x(  )``).
``indent_flexible``
    Whole lines, equal once indentation and spacing are ignored.
``escape_normalized``
    The text had ``\n``, ``\t``, quotes or ``\$`` escaped once too often: decoded, then
    matched verbatim or as whole lines; the replacement is decoded the same way, and refused
    when it has ``\n``, ``\t`` or ``\\`` escapes while the search escaped only quotes or ``$``.
``trimmed_boundary``
    The text without its leading and trailing blank lines and spaces, never starting or ending
    inside an identifier, nor mid-line on a side where the search had a line break.
``unicode_normalized``
    Whole lines (or a one-line search inside a line), equal once smart quotes, dashes (``--``
    for ``—`` too), ellipses and Unicode spaces read as ASCII; such characters of the search
    that the file never uses are written as ASCII, and those of the file are kept.
``block_anchor``
    At least 3 non-blank lines; the first and last equal (as above), the lines between at least
    60% similar on average, every one of them scored.
``context_aware``
    At least 3 non-blank lines, half of the non-blank ones at least 80% similar to the file's;
    only blocks sharing at least one line with the search are considered.

Whitespace is never ignored between two words (``foo bar`` is not ``foobar``), lines are never
joined, and the last two strategies must find exactly one block and refuse searches with an
elision placeholder (``...``, ``# ... existing code ...``). Their block may have one line more
or fewer than the search (a line the model skipped, or wrote though the file lacks it): the
search is lined up with it, each line facing the file line most like it. They accept a block
only when it shares text with the search: two lines of text, one verbatim, none of them a line
the file repeats; braces, blank lines, keywords and one line alone are boilerplate. A block
found only by supposing a line skipped never outranks one matched line for line.

Where indentation is ignored, the search's own indentation must nest its lines as the file's
are: a ``}`` binds only the block at its depth, so a match that takes an inner one for the
outer one is none, and the refusal names the line. A search shifted, re-indented with another
unit, or copied without its first line's indentation says nothing against a match; one
indented all alike says nothing at all, and an edit at a closing line the file repeats right
next to the match is refused.

An edit is applied as the line diff from ``old`` to ``new``: lines it keeps are taken from the
file, lines it changes or removes must be the file's up to whitespace (and typographic
characters, which the changed line keeps where the edit leaves them), added lines get the
file's indentation through one mapping from ``old``'s, taken from the lines the file verifiably
has (tabs stay tabs, and a file indented with tabs gets tabs for added lines indented with
spaces); where no one shift maps it, a changed line keeps its own line's indentation and an
added line takes the one its neighbours agree on, or is refused. Added lines never copy a line
of ``old`` the file does not have, and go only between two lines the file verifiably has. A
file line the search skipped stays where it is; an edit that would put text on one side or the
other of it (added lines right where it stands, also across blank lines, or next to blank
lines the search claims and the file lacks) is refused, naming it, and so is one that comes
out otherwise on another equally good lining-up. A line the search has and the file lacks is
never written. Trailing whitespace ``old`` has and the file lacks is garbling, not written
back. ``\t`` and ``\n`` escapes in ``new`` that stand where ``old`` and the file have a real tab
or line break are decoded; a one-line ``new`` of escapes that cannot be read so is refused.
``replace_all`` refuses to make a file more than ten times larger (past 1 MiB) or larger than
64 MiB; the ambiguity message counts places as ``replace_all`` would replace them, and says
when they are one stretch of repeated text. A match of whole lines is replaced by whole lines:
a final newline that only one of ``old`` and ``new`` has neither joins two lines nor adds a
blank one. A ``new`` that abbreviates lines of ``old`` with a placeholder comment is refused,
since it would delete them. The BOM, the line endings (an edited region takes the ending of its
first line) and the presence of a final newline are kept, except that at the end of a file
without one, the line breaks ``new`` ends with where ``old`` had none are written. Refusals
raise ``MatchError`` subclasses whose message tells the model what to do next.
"""

from __future__ import annotations

from dataclasses import dataclass

from neta.errors import AmbiguousMatchError, InvalidEditError, MatchError, NoMatchError
from neta.fuzzy_match._diff import line_diff
from neta.fuzzy_match._edit import edits as edits_of
from neta.fuzzy_match._edit import first_line, line_range, span
from neta.fuzzy_match._escapes import decode_stray_escapes
from neta.fuzzy_match._exact import check_output_size, replace_exact
from neta.fuzzy_match._line_index import LineIndex
from neta.fuzzy_match._messages import (
    already_applied,
    ambiguous,
    elided_in_new,
    nested_unlike,
    no_match,
    placeholder,
)
from neta.fuzzy_match._similarity import block_anchor, context_aware
from neta.fuzzy_match._strategies import (
    PRESENCE,
    Context,
    Found,
    Strategy,
    escape_normalized,
    exact,
    first_found,
    indent_flexible,
    line_trimmed,
    trimmed_boundary,
    unicode_normalized,
    whitespace_normalized,
)
from neta.fuzzy_match._text import (
    Document,
    is_placeholder,
    key_ws,
    names_elision,
    normalize_newlines,
)

__all__ = [
    "STRATEGIES",
    "AmbiguousMatchError",
    "FuzzyMatch",
    "InvalidEditError",
    "MatchError",
    "NoMatchError",
    "Replacement",
    "fuzzy_find_all",
    "fuzzy_replace",
]

_ORDER: tuple[Strategy, ...] = (
    exact,
    line_trimmed,
    whitespace_normalized,
    indent_flexible,
    escape_normalized,
    trimmed_boundary,
    unicode_normalized,
    block_anchor,
    context_aware,
)
"""Every strategy, in the order they are tried: the one place that order is set."""

STRATEGIES: tuple[str, ...] = tuple(strategy.__name__ for strategy in _ORDER)
"""The strategies' names, in the order they are tried."""

_FIND_LIMIT = 10_000
"""``fuzzy_find_all`` reports at most this many matches."""

_AMBIGUITY_LIMIT = 1_000
"""``fuzzy_replace`` stops counting the places of an ambiguous search here."""


@dataclass(frozen=True)
class FuzzyMatch:
    """One place where a search was found.

    Attributes:
        strategy: the name of the strategy that found it (one of ``STRATEGIES``).
        start: offset of its first character in the content searched.
        end: offset just past its last character.
        matched_text: ``content[start:end]``, the file's own text.
    """

    strategy: str
    start: int
    end: int
    matched_text: str


@dataclass(frozen=True)
class Replacement:
    """The outcome of an edit.

    Attributes:
        content: the whole new content.
        count: how many places were replaced.
        strategy: the name of the strategy that found them.
        start_line: first line (1-based) of the first replaced region, in the original content.
        end_line: last line (1-based) of that region, in the original content.
    """

    content: str
    count: int
    strategy: str
    start_line: int
    end_line: int


def fuzzy_find_all(content: str, search: str) -> list[FuzzyMatch]:
    r"""Every place the first strategy that finds ``search`` in ``content`` found it.

    Overlapping places count separately (``"x\nx"`` occurs twice in ``"x\nx\nx"``). At most
    10,000 places are reported.

    Args:
        content: the text searched, a whole file as read (BOM and CRLF allowed).
        search: the text to find.

    Returns:
        The matches in file order, all from one strategy; empty when nothing was found or the
        search is blank.
    """
    needle = _as_searched(search)
    if not needle.strip():
        return []
    doc = Document(content)
    found = first_found(Context(LineIndex(doc), limit=_FIND_LIMIT), needle, _ORDER)
    if found is None:
        return []
    matches = []
    for start in found.starts:
        span_start, span_end = span(doc, found, start)
        raw_start, raw_end = doc.raw_offset(span_start), doc.raw_offset(span_end)
        matches.append(FuzzyMatch(found.strategy, raw_start, raw_end, content[raw_start:raw_end]))
    return matches


def fuzzy_replace(content: str, old: str, new: str, replace_all: bool = False) -> Replacement:
    r"""Replace the one place where ``old`` is found in ``content`` (or every place) by ``new``.

    ``new`` is inserted literally (``\1`` or ``$&`` are plain text). Where ``old`` matched
    loosely, the lines ``new`` keeps from ``old`` are taken from the file as they are, and
    ``new`` is re-indented like the file. With ``replace_all`` the places the deciding strategy
    found are replaced back to front, leftmost first where they overlap; the inserted text is
    never searched again.

    Args:
        content: the whole file as read (BOM and CRLF allowed, and kept).
        old: the text to replace, as the model quoted it.
        new: the text to put in its place.
        replace_all: replace every place instead of refusing when there are several.

    Returns:
        The new content, with the strategy used and where the first edit was.

    Raises:
        InvalidEditError: ``old`` is empty or blank, equals ``new``, elides code while not
            matching; ``new`` elides lines of ``old``, or is escaped unlike ``old``; the edit
            is already applied, or it would change nothing.
        AmbiguousMatchError: ``old`` was found at several places (without ``replace_all``, or
            by a similarity strategy, which must find exactly one).
        NoMatchError: ``old`` was not found; or, matched approximately, a line the edit changes
            differs from the file's, an added line repeats such a line, or such lines are all
            that would place an added line.
    """
    old_text, new_text = _as_searched(old), _as_searched(new)
    _check_edit(old_text, new_text)
    quick = replace_exact(content, old_text, new_text, replace_all)
    if quick is not None:
        edited, count, start_line, end_line = quick
        return Replacement(edited, count, "exact", start_line, end_line)
    doc = Document(content)
    index = LineIndex(doc)
    ctx = Context(index, not replace_all, None if replace_all else _AMBIGUITY_LIMIT)
    found = first_found(ctx, old_text, _ORDER)
    if found is None:
        raise _not_found(doc, ctx, old_text, new_text)
    if found.incomplete or (len(found.starts) > 1 and (found.fuzzy or not replace_all)):
        lines = [first_line(doc, found, start) for start in found.starts]
        capped = len(lines) >= _AMBIGUITY_LIMIT
        separate = [first_line(doc, found, start) for start in _separate(found)]
        message = ambiguous(found, lines, separate, replace_all=replace_all, capped=capped)
        raise AmbiguousMatchError(message, lines=lines, strategy=found.strategy)
    if found.strategy != "escape_normalized":
        region = doc.text[slice(*span(doc, found, found.starts[0]))]
        new_text = decode_stray_escapes(region, found.search, new_text)
    try:
        edits = edits_of(doc, found, new_text)
    except NoMatchError:
        applied = _applied(doc, index, old_text, new_text) if found.fuzzy else None
        if applied is not None:
            raise applied from None  # the line old has and the file lacks is the one it removes
        raise
    if replace_all:
        growth = sum(len(text) - (end - start) for start, end, text in edits)
        check_output_size(len(content), len(content) + growth, len(edits))
    at_end = edits[-1][1] == len(doc.text)
    tail = edits[-1][2] if at_end else ""
    # Line breaks new ends with where old ended without one are the model's to write.
    ends = len(new_text) - len(new_text.rstrip("\n")) if at_end and old_text[-1:] != "\n" else 0
    edited = doc.keep_final_newline(doc.splice(edits), tail, ends)
    if edited == content:
        raise InvalidEditError(
            "new_string differs from old_string only where the file already agrees with it "
            "(whitespace, indentation or typography), so the edit would change nothing. The "
            "file was not changed."
        )
    start_line, end_line = line_range(doc, found, found.starts[0])
    return Replacement(
        content=edited,
        count=len(found.starts),
        strategy=found.strategy,
        start_line=start_line,
        end_line=end_line,
    )


def _separate(found: Found) -> list[int]:
    """The places ``replace_all`` would replace: leftmost first where they overlap."""
    separate: list[int] = []
    free_from = 0
    for start in found.starts:
        if start >= free_from:
            separate.append(start)
            free_from = found.end_of(start)
    return separate


def _as_searched(text: str) -> str:
    # A BOM copied along with the file's first line belongs to the file, not to the text, and
    # a final CR is half of a CRLF line ending, copied without its LF: the line ends before it.
    text = normalize_newlines(text.removeprefix("\ufeff"))
    return text.removesuffix("\r")


def _check_edit(old: str, new: str) -> None:
    if not old:
        raise InvalidEditError(
            "old_string is empty, so there is no place to edit. To insert text, put an "
            "existing line next to the insertion point in old_string and repeat it in "
            "new_string; to create a file, write it whole."
        )
    if not old.strip():
        raise InvalidEditError(
            "old_string contains only whitespace, which cannot identify one place. Include the "
            "non-blank lines around the place you want to edit."
        )
    if old == new:
        raise InvalidEditError(
            "old_string and new_string are identical, so the edit would change nothing. Put "
            "the text you want in new_string."
        )
    elision = _elision(old, new)
    if elision is not None:
        raise InvalidEditError(elided_in_new(*elision))


def _elision(old: str, new: str) -> tuple[str, int] | None:
    """A placeholder line new has in place of lines of old, and how many lines it stands for.

    Only a placeholder old lacks counts, never a bare ``...`` (a Python stub's body is real
    code), and only where it replaces non-blank lines: one for a placeholder that says it
    elides (``# ... existing code ...``), two for a bare comment (``// ...``).
    """
    if "..." not in new and "\u2026" not in new:
        return None  # every placeholder has an ellipsis
    old_lines, new_lines = old.split("\n"), new.split("\n")
    if not any(is_placeholder(line) for line in new_lines):
        return None
    old_keys = {key_ws(line) for line in old_lines}
    for tag, old_from, old_to, new_from, new_to in line_diff(old_lines, new_lines):
        if tag != "replace":
            continue
        dropped = sum(1 for line in old_lines[old_from:old_to] if line.strip())
        for line in new_lines[new_from:new_to]:
            if line.strip() in ("...", "\u2026") or key_ws(line) in old_keys:
                continue
            if is_placeholder(line) and dropped >= (1 if names_elision(line) else 2):
                return line, dropped
    return None


def _not_found(doc: Document, ctx: Context, old: str, new: str) -> MatchError:
    applied = _applied(doc, ctx.index, old, new)
    if applied is not None:
        return applied
    elided = [line for line in old.split("\n") if is_placeholder(line)]
    if elided:
        return InvalidEditError(placeholder(elided[0]))
    nested = [miss for miss in ctx.near_misses if miss.reason == "nesting"]
    if nested:
        return NoMatchError(nested_unlike(doc, old, nested[0]))
    thin = [miss for miss in ctx.near_misses if miss.reason == "boilerplate"]
    return NoMatchError(no_match(ctx.index, old, thin[0] if thin else None))


def _applied(doc: Document, index: LineIndex, old: str, new: str) -> InvalidEditError | None:
    """The refusal of an edit whose new text is in the file already, if it is."""
    if new.strip() and _adds_text(old, new):
        applied = first_found(Context(index, limit=1), new, PRESENCE)
        if applied is not None:
            return InvalidEditError(already_applied(first_line(doc, applied, applied.starts[0])))
    return None


def _adds_text(old: str, new: str) -> bool:
    """Whether finding ``new`` in a file says the edit was made: it holds text ``old`` lacks.

    A deletion says so only between two lines it keeps; ``new`` being what is left of ``old``
    after cutting its first or last lines would be found whether or not the edit was made.
    """
    old_keys = [key_ws(line) for line in old.split("\n")]
    new_keys = [key_ws(line) for line in new.split("\n")]
    for tag, old_from, old_to, new_from, new_to in line_diff(old_keys, new_keys):
        if tag in ("replace", "insert") and any(new_keys[new_from:new_to]):
            return True
        if tag == "delete" and old_from > 0 and old_to < len(old_keys):
            return True
    return False
