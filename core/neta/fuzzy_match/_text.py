r"""The text the fuzzy matcher works on: a file split into lines, and the line keys it compares.

Matching happens on ``Document.text``: the file without its BOM and with every ``\r\n``
turned into ``\n``. Offsets into that text are mapped back to the caller's content, and edits
are spliced back with the file's own line endings, so neither the BOM nor CRLF ever leaks into
the matching rules.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from functools import cached_property
from itertools import accumulate
from math import gcd

_BOM = "\ufeff"

_FOLD = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2039\u203a", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        "\u2026": "...",
        **dict.fromkeys("\u00a0\u1680\u202f\u205f\u3000", " "),
        **dict.fromkeys([chr(code) for code in range(0x2000, 0x200B)], " "),
    }
)
"""Typographic characters a model tends to "correct", mapped to what a source file holds."""

_ESCAPE = re.compile(r"\\([nrt\"'`$\\])")
_ESCAPED = {"n": "\n", "r": "\r", "t": "\t"}

_COMMENT_OPEN = re.compile(r"^(?:#+|//+|/\*+|<!--|--|;+|%+|\*+)\s*")
_COMMENT_CLOSE = re.compile(r"\s*(?:\*+/|-->)$")
_ELLIPSES = ("...", "\u2026")
_ELISION_WORDS = re.compile(
    r"\b(?:existing|rest|unchanged|remaining|omitted|same|previous|other|more|code|etc)\b",
    re.IGNORECASE,
)
_SPACE_INDENT = re.compile(r"^( +)(?=[^\s])", re.MULTILINE)
"""The spaces indenting a line that has text after them (not a tab)."""

_VISIBLE = str.maketrans({" ": "\u00b7", "\t": "\u2192", "\u00a0": "\u237d", "\r": "\u240d"})


class Document:
    r"""A file's content prepared for matching: BOM and line endings set aside, lines indexed.

    Attributes:
        content: the content exactly as given.
        bom: ``"\ufeff"`` when the content starts with a byte order mark, else ``""``.
        text: the content without the BOM, every ``\r\n`` turned into ``\n``.
        lines: ``text`` split on ``\n`` (a final newline leaves an empty last item).
        line_count: how many real lines there are (that empty last item not counted).
        eol: ``"\n"`` or ``"\r\n"`` when the file uses one kind only, ``None`` when mixed.
    """

    def __init__(self, content: str) -> None:
        self.content = content
        self.bom = _BOM if content.startswith(_BOM) else ""
        self._body = content[len(self.bom) :]
        crlf = self._body.count("\r\n")
        self.text = self._body.replace("\r\n", "\n") if crlf else self._body
        newlines = self.text.count("\n")
        self.eol: str | None = "\n" if not crlf else ("\r\n" if crlf == newlines else None)
        self._dominant_eol = "\r\n" if crlf * 2 > newlines else "\n"
        self.lines = self.text.split("\n")
        self.line_count = len(self.lines) - (1 if self.text.endswith("\n") else 0)

    @cached_property
    def line_starts(self) -> list[int]:
        """Offset in ``text`` where each line starts (one extra item: the end plus one)."""
        return list(accumulate((len(line) + 1 for line in self.lines), initial=0))

    @cached_property
    def _raw_pieces(self) -> list[str]:
        return self._body.split("\n")

    @cached_property
    def _raw_line_starts(self) -> list[int]:
        starts = accumulate((len(piece) + 1 for piece in self._raw_pieces), initial=0)
        return [len(self.bom) + start for start in starts]

    @cached_property
    def is_ascii(self) -> bool:
        """Whether ``text`` is all ASCII."""
        return self.text.isascii()

    @cached_property
    def indents_with_tabs(self) -> bool:
        """Whether more of the indented lines start with a tab than with a space."""
        text = self.text
        tabs = text.count("\n\t") + text.startswith("\t")
        return tabs > text.count("\n ") + text.startswith(" ")

    @cached_property
    def indent_step(self) -> int:
        """The commonest number of spaces a line is indented deeper than the line before it."""
        steps: Counter[int] = Counter()
        previous = 0
        for line in self.lines:
            body = line.lstrip(" ")
            if not body or body[0].isspace():
                continue
            depth = len(line) - len(body)
            if depth > previous:
                steps[depth - previous] += 1
            previous = depth
        return steps.most_common(1)[0][0] if steps else 0

    @cached_property
    def indent_unit(self) -> int:
        """The columns every indentation written with spaces is a multiple of (0: none)."""
        unit = 0
        for spaces in {len(run) for run in _SPACE_INDENT.findall(self.text)}:
            unit = gcd(unit, spaces)
            if unit == 1:
                break
        return unit

    @cached_property
    def folds_to_itself(self) -> bool:
        """Whether folding typographic characters changes nothing in ``text``."""
        return self.is_ascii and "--" not in self.text

    def line_of(self, offset: int) -> int:
        """The 0-based line holding ``offset`` of ``text``."""
        return bisect_right(self.line_starts, offset) - 1

    def line_end(self, line: int) -> int:
        """Offset in ``text`` just after the last character of ``line`` (before its newline)."""
        return self.line_starts[line] + len(self.lines[line])

    def has_newline_after(self, line: int) -> bool:
        """Whether ``line`` is followed by a line break in ``text``."""
        return line < len(self.lines) - 1

    def raw_offset(self, offset: int) -> int:
        """The offset in ``content`` of ``offset`` in ``text``."""
        if self.eol == "\n":
            return len(self.bom) + offset
        line = self.line_of(offset)
        if self.eol == "\r\n":
            return len(self.bom) + offset + line
        return self._raw_line_starts[line] + offset - self.line_starts[line]

    def eol_at(self, line: int) -> str:
        """The line ending for lines inserted at ``line``: that line's own, else the usual one."""
        if self.eol is not None:
            return self.eol
        pieces = self._raw_pieces
        if line < len(pieces) - 1:
            return "\r\n" if pieces[line].endswith("\r") else "\n"
        return self._dominant_eol

    def splice(self, edits: Sequence[tuple[int, int, str]]) -> str:
        r"""The content with each ``(start, end, replacement)`` of ``text`` applied.

        Edits must be sorted and must not overlap; replacements use ``\n`` and get the line
        ending of the place they land in. The BOM, and every line ending outside the edited
        spans, stay as they were.
        """
        if self.eol is not None:
            parts: list[str] = []
            done = 0
            for start, end, replacement in edits:
                parts += (self.text[done:start], replacement)
                done = end
            parts.append(self.text[done:])
            joined = "".join(parts)
            return self.bom + (joined.replace("\n", "\r\n") if self.eol == "\r\n" else joined)
        parts = [self.bom]
        done = len(self.bom)
        for start, end, replacement in edits:
            raw_start = self.raw_offset(start)
            eol = self.eol_at(self.line_of(start))
            parts += (self.content[done:raw_start], replacement.replace("\n", eol))
            done = self.raw_offset(end)
        parts.append(self.content[done:])
        return "".join(parts)

    def keep_final_newline(self, edited: str, tail: str, ends: int = 0) -> str:
        r"""``edited`` with a final newline exactly when the original content had one.

        ``tail`` is what the edit put at the end of the text (``\n`` endings; empty when it
        deleted the end). Without a final newline the file loses the line breaks ``tail`` ends
        with, and when nothing but line breaks is left of it, the one before it too: the
        separator of a deleted last line. Lines the edit did not touch are never removed.

        ``ends`` is how many line breaks the replacement ends with where the text it replaces
        ended without one: the model wrote them, so the end of a file without a final
        newline gets them (a final newline, then blank lines), as the replacement says.
        """
        had = self.text.endswith("\n")
        if not edited or edited == self.bom or (had == edited.endswith("\n") and not ends):
            return edited
        if had:
            return edited if edited.endswith("\n") else edited + self.eol_at(self.line_count - 1)
        breaks = len(tail) - len(tail.rstrip("\n")) + (0 if tail.strip("\n") else 1)
        for _ in range(breaks):
            if not edited.endswith("\n"):
                break
            edited = edited[:-2] if edited.endswith("\r\n") else edited[:-1]
        if ends and tail.strip("\n"):
            edited += self.eol_at(self.line_count - 1) * ends
        return edited


def normalize_newlines(text: str) -> str:
    r"""``text`` with ``\r\n`` turned into ``\n``, as the matcher compares it."""
    return text.replace("\r\n", "\n")


def split_lines(text: str) -> tuple[list[str], bool]:
    r"""Lines of ``text`` and whether it ended with a newline (``"a\n"`` is one line)."""
    trailing = text.endswith("\n")
    body = text[:-1] if trailing else text
    return (body.split("\n") if body or trailing else []), trailing


def key_rstrip(line: str) -> str:
    """The line without trailing whitespace."""
    return line.rstrip()


def _words(text: str) -> str:
    """``text``'s words joined by single spaces.

    Most lines are already written so: when the only whitespace left after stripping is
    single plain spaces (every other whitespace character is unprintable), that is the answer.
    """
    stripped = text.strip()
    if stripped.isprintable() and "  " not in stripped:
        return stripped
    return " ".join(stripped.split())


def key_ws_indent(line: str) -> str:
    """The line's own indentation, then its words joined by single spaces."""
    rest = line.lstrip()
    return line[: len(line) - len(rest)] + _words(rest)


def key_ws(line: str) -> str:
    """The line's words joined by single spaces: indentation and spacing ignored.

    A space always remains between two words, so ``foo bar`` never equals ``foobar``.
    """
    return _words(line)


def key_fold(line: str) -> str:
    """Like ``key_ws``, after turning smart quotes, dashes, ellipses and odd spaces into ASCII.

    A dash standing alone between spaces reads the same whether it is ``-``, ``--`` or ``—``.
    """
    folded = _words(line if line.isascii() else line.translate(_FOLD))
    return folded.replace(" -- ", " - ") if "--" in folded else folded


def fold_char(char: str) -> str:
    """What one character reads as once typography is folded (``…`` is ``...``)."""
    return char.translate(_FOLD)


def ascii_for(chars: str, missing_from: str) -> dict[int, str]:
    """A ``str.translate`` table folding those of ``chars`` that ``missing_from`` never holds."""
    return {
        code: _FOLD[code]
        for code in {ord(char) for char in chars if not char.isascii()}
        if code in _FOLD and chr(code) not in missing_from
    }


def unescape(text: str) -> str:
    r"""``text`` with ``\n``, ``\t``, ``\r``, ``\"``, ``\'``, ``\```, ``\$``, ``\\`` decoded."""
    decoded = _ESCAPE.sub(lambda match: _ESCAPED.get(match[1], match[1]), text)
    return normalize_newlines(decoded)


def is_placeholder(line: str) -> bool:
    """Whether ``line`` stands for elided code (``...``, ``# ... existing code ...``).

    A JavaScript spread (``...args,``) and a comment that merely ends in an ellipsis
    (``# Loading...``) are real code, not placeholders.
    """
    if "..." not in line and "\u2026" not in line:
        return False
    stripped = line.strip()
    inner = _COMMENT_CLOSE.sub("", _COMMENT_OPEN.sub("", stripped, count=1)).strip()
    was_comment = inner != stripped
    if inner in ("...", "\u2026", "[...]", "(...)", "{...}"):
        return True
    for mark in _ELLIPSES:
        after = inner[len(mark) :]
        if inner.startswith(mark) and (after[:1].isspace() or after.endswith(_ELLIPSES)):
            return True
    has_ellipsis = any(mark in inner for mark in _ELLIPSES)
    return was_comment and has_ellipsis and _ELISION_WORDS.search(inner) is not None


def names_elision(line: str) -> bool:
    """Whether ``line`` has a word of elision (``existing``, ``rest``, ``unchanged``...)."""
    return _ELISION_WORDS.search(line) is not None


def visible(text: str) -> str:
    """``text`` with spaces shown as ``·``, tabs as ``→``, NBSP as ``⍽`` and CR as ``␍``."""
    return text.translate(_VISIBLE)


_WORD = re.compile(r"\w+")

_KEYWORDS = frozenset(
    _WORD.findall(
        """
        and as async await begin break case catch continue def default do done elif else end
        err error esac except false fi finally fn for func function if in is let loop new nil
        none not null ok or pass raise return self super then this throw true try undefined var
        void while yield
        """
    )
)
"""Words that say nothing about where a line is: a line of only these is boilerplate."""


def carries_text(key: str) -> bool:
    """Whether a line (its key) says where it is: it has a word other than a common keyword.

    Braces, blank lines, ``return``, ``} else {``, ``if err != nil {`` are boilerplate: they
    recur everywhere, so sharing them with a block says nothing about the place.
    """
    return any(word.lower() not in _KEYWORDS for word in _WORD.findall(key))
