"""The strict strategies: text equal to the search up to one normalisation or another.

Each strategy returns every place it finds (a ``Found``) or ``None``; ``first_found`` stops at
the first that finds anything and names the result after it. Each compares through a key that
ignores a little more than the one before. The order they are tried in is set once, in the
package's ``__init__``; the similarity strategies are in ``_similarity``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from neta.errors import InvalidEditError, NoMatchError
from neta.fuzzy_match._align import Alignment
from neta.fuzzy_match._inline import fragment_pattern
from neta.fuzzy_match._line_index import KeyKind, LineIndex
from neta.fuzzy_match._nesting import nesting_conflict
from neta.fuzzy_match._text import (
    Document,
    ascii_for,
    split_lines,
    unescape,
)


def _same(text: str) -> str:
    return text


@dataclass(frozen=True)
class Found:
    r"""Every place one strategy found the search.

    Attributes:
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
        strategy: the name of the strategy that found it (set by ``first_found``).
        ends: where each match ends, by its start, when matches differ in length (then
            ``size`` is that of the search).
        restyle: write the replacement onto each match keeping the file's characters where
            it keeps the search's (matches inside a line, found up to spacing or typography).
        aligned: ``by_lines`` matches of another length than the search: how the search's
            lines face the file's, by the match's first line (``ends`` says where each ends).
        margins: the blank lines the search had before and after the lines matched (which
            ``adapt_new`` drops from the replacement too).
    """

    starts: list[int]
    size: int
    by_lines: bool
    search: str
    trailing_newline: bool
    adapt_new: Callable[[str], str] = _same
    fuzzy: bool = False
    incomplete: bool = False
    strategy: str = ""
    ends: dict[int, int] | None = None
    restyle: bool = False
    aligned: dict[int, Alignment] | None = None
    margins: tuple[int, int] = (0, 0)

    def end_of(self, start: int) -> int:
        """Where the match at ``start`` ends: an offset, or (``by_lines``) the line after it."""
        return self.ends[start] if self.ends is not None else start + self.size


@dataclass(frozen=True)
class NearMiss:
    """A block a strategy found and set aside, kept to explain the refusal if nothing else is.

    Attributes:
        strategy: the strategy that found it.
        start: its first line (0-based).
        end: the line after its last.
        reason: ``"nesting"`` (a line of the search faces a line nested otherwise than the
            search's structure says) or ``"boilerplate"`` (all it shares with the search is
            braces, blank lines, keywords and at most one line of text).
        offset: the search line at fault (0-based), if one is.
        line: the file line it faces (0-based), if it faces one.
        reference: ``"nesting"``: the search line it was compared with.
        reference_line: the file line that one faces.
    """

    strategy: str
    start: int
    end: int
    reason: str
    offset: int | None = None
    line: int | None = None
    reference: int | None = None
    reference_line: int | None = None


@dataclass(frozen=True)
class Context:
    """One search's view of a document.

    Attributes:
        index: the line keys of the document searched.
        overlapping: whether matches overlapping an earlier one count (else left first wins).
        limit: stop collecting matches after this many.
        near_misses: blocks strategies found and set aside (filled in as they search).
    """

    index: LineIndex
    overlapping: bool = True
    limit: int | None = None
    near_misses: list[NearMiss] = field(default_factory=list)

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
    ctx: Context,
    search: str,
    kind: KeyKind,
    adapt_new: Callable[[str], str] = _same,
) -> Found | None:
    lines, trailing = split_lines(search)
    if not lines:
        return None
    starts = ctx.index.windows(kind, lines, overlapping=ctx.overlapping, limit=ctx.limit)
    if kind in (KeyKind.WS, KeyKind.FOLD):
        starts = _nested_alike(ctx, lines, starts)
    if not starts:
        return None
    return Found(starts, len(lines), True, "\n".join(lines), trailing, adapt_new)


def _nested_alike(ctx: Context, lines: list[str], starts: list[int]) -> list[int]:
    """The places whose lines are nested as the search's are (their indentation was ignored).

    A place where a search line faces one of the file's nested otherwise (an inner ``}`` for
    the search's outer one) is set aside as a near miss.
    """
    if len(lines) < 2:
        return starts
    return [start for start in starts if not _nested_unlike(ctx, lines, start)]


def _nested_unlike(ctx: Context, lines: list[str], first: int) -> bool:
    """Whether the file's lines from ``first`` nest unlike ``lines``; if so, a near miss."""
    block = ctx.doc.lines[first : first + len(lines)]
    doc = ctx.doc
    conflict = nesting_conflict(
        lines,
        block,
        range(len(lines)),
        lambda: doc.indent_unit,
        lambda: doc.indent_step,
        halves=True,
    )
    if conflict is None:
        return False
    ctx.near_misses.append(
        NearMiss(
            strategy="",
            start=first,
            end=first + len(lines),
            reason="nesting",
            offset=conflict.offset,
            line=first + conflict.offset,
            reference=conflict.reference,
            reference_line=first + conflict.reference,
        )
    )
    return True


def exact(ctx: Context, search: str) -> Found | None:
    """The search occurs verbatim (line endings aside), anywhere, even inside a line."""
    starts = _text_starts(ctx, search)
    return Found(starts, len(search), False, search, False) if starts else None


def line_trimmed(ctx: Context, search: str) -> Found | None:
    """Whole lines equal once trailing whitespace is ignored; indentation must agree."""
    return _by_lines(ctx, search, KeyKind.RSTRIP)


def whitespace_normalized(ctx: Context, search: str) -> Found | None:
    """Whole lines equal once runs of whitespace inside them count as one space.

    A one-line search that is no whole line, not even ignoring indentation, may also match
    inside a line with its whitespace between tokens off (``foo   bar``, ``x(  )``).
    """
    found = _by_lines(ctx, search, KeyKind.WS_INDENT)
    if found is not None or "\n" in search:
        return found
    if ctx.index.windows(KeyKind.WS, [search], limit=1):
        return None  # a whole line is indent_flexible's to find, and re-indent
    return _in_line(ctx, search, fold=False)


def indent_flexible(ctx: Context, search: str) -> Found | None:
    """Whole lines equal once indentation and spacing are ignored (the edit is re-indented)."""
    return _by_lines(ctx, search, KeyKind.WS)


def escape_normalized(ctx: Context, search: str) -> Found | None:
    r"""The search had ``\n``, ``\t`` or quotes escaped once too often: decode, then match."""
    decoded = unescape(search)
    if decoded == search or not decoded.strip():
        return None
    # A search whose only line breaks are escaped says the replacement's are escaped too.
    adapt = partial(
        _unescape_like,
        breaks_escaped="\n" in decoded and "\n" not in search,
        controls_escaped=_ESCAPES_CONTROLS.search(search) is not None,
    )
    starts = _text_starts(ctx, decoded)
    if starts:
        return Found(starts, len(decoded), False, decoded, False, adapt)
    return _by_lines(ctx, decoded, KeyKind.WS, adapt)


_ESCAPES_CONTROLS = re.compile(r"(?<!\\)(?:\\\\)*\\[nrt\\]")
r"""A ``\n``, ``\r``, ``\t`` or ``\\`` escape (not itself escaped)."""


def _unescape_like(new: str, *, breaks_escaped: bool, controls_escaped: bool = True) -> str:
    r"""``new`` decoded as the search was; refused when it is not escaped like the search.

    Raises:
        InvalidEditError: the search escaped its line breaks while ``new`` has real ones and
            escapes as well, so which of its escapes are text cannot be told; or the search
            escaped only quotes or ``$`` while ``new`` has ``\n``, ``\r``, ``\t`` or ``\\``.
    """
    if not controls_escaped and _ESCAPES_CONTROLS.search(new) is not None:
        raise InvalidEditError(
            "old_string was found only once its escaped quotes (or $) were decoded, but "
            "new_string also holds \\n, \\r or \\t escapes, which old_string never used: "
            "whether they are line breaks and tabs or text (a path, an escape in a string) "
            "cannot be told. The file was not changed. Send old_string and new_string as the "
            "file has them, without escaping their quotes."
        )
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
    ``"  foo  "`` never matches in ``foobar``; on a side where the search had a line break
    it must start or end its line, so ``"\nreturn x\n"`` never matches in ``return x + 1``;
    and text spanning lines that the search indents starts its line (``"    )\n)"`` is no
    line's last ``)``). Its first line must be nested as its others say, and text added next
    to blank lines it claims around it goes only where the file has them.
    """
    core = search.strip()
    if core == search or not core:
        return None
    lead = search[: len(search) - len(search.lstrip())]
    trail = search[len(search.rstrip()) :]
    # A line break around the text says where its line starts or ends: never mid-line there.
    # So does indentation before text that spans lines: its first line is a whole line.
    line_start = "\n" in lead or ("\n" in core and lead != "")
    starts = _text_starts(
        ctx, core, whole_words=True, line_start=line_start, line_end="\n" in trail
    )
    if "\n" in core:
        starts = _first_line_nested_alike(ctx, lead[lead.rfind("\n") + 1 :] + core, starts)
    if starts:
        # Spaces the search has after its text, where every match ends its line in the file,
        # are garbling, and new's lines carry it too: it is not written back.
        text = ctx.doc.text
        garbled = trail.split("\n")[0] != "" and all(
            text[start + len(core) : start + len(core) + 1] in ("\n", "") for start in starts
        )
        # Where the search starts its line, new's further lines are indented as it is: one
        # shift, from the search's indentation to the file's, places them (if all agree).
        indent_from = lead[lead.rfind("\n") + 1 :] if "\n" in lead else None
        indents = {text[ctx.doc.line_starts[ctx.doc.line_of(start)] : start] for start in starts}
        indent_to = indents.pop() if len(indents) == 1 else None
        adapt = partial(
            _trim_like,
            lead=lead,
            trail=trail,
            garbled=garbled,
            indent=None if indent_from is None else (indent_from, indent_to),
        )
        return Found(starts, len(core), False, core, False, adapt, margins=_margins(lead, trail))
    lines = search.split("\n")
    blank_lead = _count_blank(lines)
    blank_trail = _count_blank(reversed(lines))
    if not blank_lead and not blank_trail:
        return None  # only spaces around the text: indent_flexible already compared these lines
    trimmed = "\n".join(lines[blank_lead : len(lines) - blank_trail])
    adapt = partial(_drop_blank_lines, lead=blank_lead, trail=blank_trail)
    found = _by_lines(ctx, trimmed, KeyKind.WS, adapt)
    return None if found is None else replace(found, margins=_margins(lead, trail))


def _margins(lead: str, trail: str) -> tuple[int, int]:
    """The blank lines a search claims before and after its text.

    The line break next to the text only says where its line starts or ends (as an exact
    match reads it); each further one is a blank line.
    """
    return max(0, lead.count("\n") - 1), max(0, trail.count("\n") - 1)


def _first_line_nested_alike(ctx: Context, search: str, starts: list[int]) -> list[int]:
    """The places where the search's first line is nested as its others say.

    Its further lines matched verbatim, indentation and all; its first line was matched
    without its indentation, so it could be any ``}`` of the file, not the one the search's
    indentation makes it. A place that starts mid-line says nothing about that line.
    """
    doc = ctx.doc
    lines = search.split("\n")
    return [
        start
        for start in starts
        if doc.text[doc.line_starts[doc.line_of(start)] : start].strip()
        or not _nested_unlike(ctx, lines, doc.line_of(start))
    ]


def _count_blank(lines: Iterable[str]) -> int:
    count = 0
    for line in lines:
        if line.strip():
            break
        count += 1
    return count


def _trim_like(
    new: str,
    *,
    lead: str,
    trail: str,
    garbled: bool = False,
    indent: tuple[str, str | None] | None = None,
) -> str:
    """``new`` without the leading and trailing whitespace it shares with the trimmed search.

    What new shares is counted from either end of the search's whitespace, so a new that
    leaves out the search's blank lines but keeps its indentation loses the indentation too.
    With ``garbled``, new's non-blank lines also lose their trailing whitespace. With
    ``indent`` (the search's indentation and the file's, None when the places differ), new's
    lines after its first are moved from the one to the other.

    Raises:
        NoMatchError: new has a line that shift cannot place.
    """
    new_lead = new[: len(new) - len(new.lstrip())]
    new = new[_shared(lead, new_lead) :]
    new_trail = new[len(new.rstrip()) :]
    new = new[: len(new) - _shared(trail[::-1], new_trail[::-1])]
    lines = new.split("\n")
    if garbled:
        lines = [line.rstrip() if line.strip() else line for line in lines]
    if indent is not None and len(lines) > 1 and indent[0] != indent[1]:
        ours, theirs = indent
        for number, line in enumerate(lines[1:], 1):
            rest = line[len(ours) :]
            mixed = bool(theirs) and rest[:1] in (" ", "\t") and rest[0] not in str(theirs)
            if theirs is not None and line.startswith(ours) and not mixed:
                lines[number] = theirs + rest  # tabs stay tabs: never spaces after them
            elif line.strip():
                raise NoMatchError(_unplaced_line(line, ours, theirs))
    return "\n".join(lines)


def _unplaced_line(line: str, ours: str, theirs: str | None) -> str:
    where = (
        "the places it matched are indented differently"
        if theirs is None
        else f"old_string is indented {len(ours)} characters where the file has {len(theirs)}, "
        "and this line is indented less than old_string, or with other characters"
    )
    return (
        f"old_string matched only once its surrounding whitespace was dropped, and new_string's "
        f"line {line.strip()!r} cannot be indented like the file: {where}. The file was not "
        "changed. Quote old_string with the file's own indentation."
    )


def _shared(whitespace: str, new_whitespace: str) -> int:
    """How much of ``new_whitespace`` (from its start) stands for the search's ``whitespace``."""
    prefix = _shared_prefix(whitespace, new_whitespace)
    suffix = _shared_prefix(whitespace[::-1], new_whitespace[::-1])
    # A shared end counts only as a whole: all of new's whitespace is the search's.
    return max(prefix, suffix if suffix == len(new_whitespace) else 0)


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
    return _by_lines(ctx, search, KeyKind.FOLD, adapt) or _in_line(ctx, search, fold=True)


def _in_line(ctx: Context, search: str, *, fold: bool) -> Found | None:
    """A one-line search matched inside lines, whitespace between tokens set aside.

    With ``fold`` typography is set aside too. The file's characters are kept where the edit
    keeps the search's.
    """
    if "\n" in search:
        return None
    pattern = fragment_pattern(search, fold=fold)
    if pattern is None:
        return None
    text = ctx.doc.text
    ends: dict[int, int] = {}
    match = pattern.search(text)
    while match is not None:
        start, end = match.span()
        inside_word = (start > 0 and _is_word(text[start - 1]) and _is_word(text[start])) or (
            end < len(text) and _is_word(text[end]) and _is_word(text[end - 1])
        )
        if inside_word:
            match = pattern.search(text, start + 1)
            continue
        ends[start] = end
        if ctx.limit is not None and len(ends) >= ctx.limit:
            break
        # Overlapping places count, as for exact matches: each could be the one meant.
        match = pattern.search(text, start + 1 if ctx.overlapping else end)
    if not ends:
        return None
    return Found(list(ends), len(search), False, search, False, ends=ends, restyle=True)


def _translate(text: str, *, table: dict[int, str]) -> str:
    return text.translate(table)


def exact_words(ctx: Context, search: str) -> Found | None:
    """Like ``exact``, but never starting or ending inside an identifier."""
    starts = _text_starts(ctx, search, whole_words=True)
    return Found(starts, len(search), False, search, False) if starts else None


PRESENCE: tuple[Strategy, ...] = (
    exact_words,
    line_trimmed,
    whitespace_normalized,
    indent_flexible,
    trimmed_boundary,
    unicode_normalized,
)
"""The strategies telling whether a replacement is already in a file (not as part of a word)."""


def first_found(ctx: Context, search: str, strategies: Sequence[Strategy]) -> Found | None:
    """What the first of ``strategies`` that finds anything found, named after that strategy."""
    for strategy in strategies:
        missed = len(ctx.near_misses)
        found = strategy(ctx, search)
        ctx.near_misses[missed:] = [
            replace(miss, strategy=miss.strategy or strategy.__name__)
            for miss in ctx.near_misses[missed:]
        ]
        if found is not None:
            return replace(found, strategy=strategy.__name__)
    return None
