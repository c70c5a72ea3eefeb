"""Inside one line: matching a fragment with its spacing or typography off, and writing it back.

A model collapses ``foo   bar`` to ``foo bar``, drops the spaces in ``x(  )``, or types ``...``
for ``…``. ``fragment_pattern`` turns a one-line search into a pattern that allows exactly
that: more or other whitespace where the search has some, optional whitespace between two
tokens (never inside an identifier, an operator or a string), and with ``fold`` the ASCII
stand-ins for typographic characters. ``keep_file_chars`` writes an edit of such a text so that
what the edit leaves alone keeps the file's own characters.
"""

from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher
from functools import lru_cache

from neta.fuzzy_match._text import fold_char

_SPACE = r"[^\S\n]"
"""Whitespace within a line."""

_KEEP_LIMIT = 2_000
"""Longer texts are written as new has them: aligning them character by character is slow."""

_QUOTES = "'\"`\u2018\u2019\u201c\u201d"
_BRACKETS = "()[]{}<>,;:"
_EQUIVALENT = {
    '"': '"\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb',
    "'": "'\u2018\u2019\u201a\u201b\u2032\u2039\u203a",
    "-": "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212",
}
_ELLIPSIS = r"(?:\.\.\.|\u2026)"
_LONG_DASH = "(?:--|[\u2013\u2014\u2015])"


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _gap_allowed(before: str, after: str) -> bool:
    """Whether whitespace the search lacks may stand between these two characters."""
    if _is_word(before) and _is_word(after):
        return False  # inside an identifier or a number
    if before in _QUOTES or after in _QUOTES:
        return False  # at a string's edge the whitespace is the string's
    return before in _BRACKETS or after in _BRACKETS or _is_word(before) or _is_word(after)


def fragment_pattern(search: str, *, fold: bool) -> re.Pattern[str] | None:
    """A pattern for ``search`` inside a line, or None when the search does not qualify.

    The search must be one line without leading or trailing whitespace. A match may start or
    end inside an identifier: the caller rejects those.
    """
    if "\n" in search or search != search.strip() or not search:
        return None
    parts: list[str] = []
    quote = ""
    previous = ""
    position = 0
    while position < len(search):
        char = search[position]
        if char.isspace():
            run_end = position
            while run_end < len(search) and search[run_end].isspace():
                run_end += 1
            run = search[position:run_end]
            parts.append(re.escape(run) if quote else _SPACE + "++")
            position, previous = run_end, " "
            continue
        if previous and previous != " " and not quote and _gap_allowed(previous, char):
            parts.append(_SPACE + "*+")
        piece, size = _char_pattern(search, position, fold)
        parts.append(piece)
        if char in _QUOTES and (not quote or _closes(quote, char)):
            quote = "" if quote else char
        elif char == "\\" and quote and position + 1 < len(search):
            parts.append(re.escape(search[position + 1]))
            size += 1
        previous = search[position + size - 1]
        position += size
    # No lookaround at the ends: a pattern starting with literal text is found much faster,
    # so the caller checks that a match neither starts nor ends inside an identifier.
    return re.compile("".join(parts))


def _closes(quote: str, char: str) -> bool:
    return fold_char(quote) == fold_char(char)


def _char_pattern(search: str, position: int, fold: bool) -> tuple[str, int]:
    """The pattern for the character at ``position`` and how many characters it covers."""
    char = search[position]
    if not fold:
        return re.escape(char), 1
    if search.startswith("...", position) or char == "\u2026":
        return _ELLIPSIS, 3 if char == "." else 1
    if search.startswith("--", position) and not search.startswith("---", position):
        return _LONG_DASH, 2
    folded = fold_char(char)
    if folded in _EQUIVALENT:
        if folded == "-" and char in "\u2013\u2014\u2015":
            return "(?:--|[" + re.escape(_EQUIVALENT["-"]) + "])", 1
        return "[" + re.escape(_EQUIVALENT[folded]) + "]", 1
    if folded == " ":
        return _SPACE, 1
    return re.escape(char), 1


def _atoms(text: str) -> tuple[str, list[int], list[str]]:
    """``text`` folded for alignment, the unit of each folded character, and the units.

    A unit is one character of ``text``, or one run of whitespace (folded to one space);
    every dash folds to one ``-`` (``--`` being one unit), an ellipsis to ``...``.
    """
    folded: list[str] = []
    owner: list[int] = []
    units: list[str] = []
    position = 0
    while position < len(text):
        char = text[position]
        size = 1
        if char.isspace():
            while position + size < len(text) and text[position + size].isspace():
                size += 1
            piece = " "
        elif text.startswith("--", position) and not text.startswith("---", position):
            size, piece = 2, "-"
        else:
            piece = fold_char(char)
        units.append(text[position : position + size])
        folded += piece
        owner += [len(units) - 1] * len(piece)
        position += size
    return "".join(folded), owner, units


@lru_cache(maxsize=256)
def keep_file_chars(theirs: str, ours: str, new: str) -> str:
    """``new`` with the parts it keeps from ``ours`` written as ``theirs`` has them.

    ``ours`` is the search as the model wrote it, ``theirs`` the file's text it matched (equal
    up to whitespace and typography); ``new`` the replacement. A part of ``new`` written as
    ``ours`` writes it (a hyphen where ``ours`` had ``--`` is a change) takes the file's
    characters there (whitespace only where the file's is
    typographic, as NBSP); what ``new`` changes is written as ``new`` has it. Texts longer than
    2,000 characters are written as ``new`` has them.
    """
    if theirs == ours or not new or max(len(theirs), len(new)) > _KEEP_LIMIT:
        return new
    if theirs.isascii() and ours.isascii():
        return new  # they differ in plain whitespace only, which is new's to decide
    file_text, file_owner, file_units = _atoms(theirs)
    our_text, our_owner, our_units = _atoms(ours)
    new_text, new_owner, new_units = _atoms(new)
    to_file: dict[int, int] = {}
    for ours_at, file_at, size in SequenceMatcher(
        None, our_text, file_text, autojunk=False
    ).get_matching_blocks():
        to_file.update((ours_at + k, file_at + k) for k in range(size))
    from_file: list[int | None] = [None] * len(new_text)
    for ours_at, new_at, size in SequenceMatcher(
        None, our_text, new_text, autojunk=False
    ).get_matching_blocks():
        for k in range(size):
            # Only what new writes as old did is kept: "-" where old had "--" is a change.
            if our_units[our_owner[ours_at + k]] == new_units[new_owner[new_at + k]]:
                from_file[new_at + k] = to_file.get(ours_at + k)
    unit_sizes = Counter(file_owner)
    positions: list[list[int]] = [[] for _ in new_units]
    for at, owner in enumerate(new_owner):
        positions[owner].append(at)
    faced: list[set[int] | None] = []
    for unit_positions in positions:
        ats = [from_file[at] for at in unit_positions]
        faced.append(
            None if any(at is None for at in ats) else {at for at in ats if at is not None}
        )
    pieces: list[str] = []
    unit = 0
    while unit < len(new_units):
        group = faced[unit]
        end = unit + 1
        if group is None:
            pieces.append(new_units[unit])
            unit = end
            continue
        # New's units facing the same file units (three dots facing one ellipsis) go together.
        touched = {file_owner[at] for at in group}
        while end < len(new_units):
            following = faced[end]
            if following is None or not touched & {file_owner[at] for at in following}:
                break
            group = group | following
            touched |= {file_owner[at] for at in following}
            end += 1
        pieces.append(
            _file_side(new_units[unit:end], group, touched, file_owner, file_units, unit_sizes)
        )
        unit = end
    return "".join(pieces)


def _file_side(
    new_units: list[str],
    faced: set[int],
    touched: set[int],
    file_owner: list[int],
    file_units: list[str],
    unit_sizes: Counter[int],
) -> str:
    """The file's text for new's units that face exactly the file units ``touched``.

    Falls back to new's own text unless every folded character of those file units is faced.
    Whitespace stays new's unless the file's is typographic (NBSP, U+3000...).
    """
    sizes = Counter(file_owner[at] for at in faced)
    if any(sizes[k] != unit_sizes[k] for k in touched):
        return "".join(new_units)
    text = "".join(file_units[k] for k in sorted(touched))
    if text.isspace() and text.isascii():
        return "".join(new_units)
    return text
