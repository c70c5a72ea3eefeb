r"""Escapes in ``new_string`` that stand for the tab or line break the file really has.

A model that escapes its arguments once too often sends ``\t`` where ``old_string`` and the
file hold a tab, or a whole block on one line with ``\n`` between its lines. Written as text,
that is a syntax error. An escape is decoded only where it stands in for the real character:
that character must be in ``old_string`` and in the matched region, neither may hold the
two-character sequence itself, and with the escape decoded the character must line up with
the same character of ``old_string``. An escape added inside a string stays as it is, and
so does every escape of a character ``new_string`` itself holds for real.
"""

from __future__ import annotations

from collections.abc import Iterator
from difflib import SequenceMatcher

from neta.errors import InvalidEditError
from neta.fuzzy_match._text import key_ws

_DECODED = {"t": "\t", "n": "\n"}

_ALIGN_BUDGET = 4_000_000
"""The largest ``len(old) * len(new)`` aligned by character; past it nothing is decoded."""


def _escapes(text: str, letter: str) -> Iterator[int]:
    r"""Offsets of the backslashes that escape ``letter`` (``\\\\t`` is a backslash, then ``t``)."""
    position = text.find("\\")
    while position != -1:
        run_end = position
        while run_end < len(text) and text[run_end] == "\\":
            run_end += 1
        if (run_end - position) % 2 and text[run_end : run_end + 1] == letter:
            yield run_end - 1
        position = text.find("\\", run_end)


def _has_escape(text: str, letter: str) -> bool:
    return next(_escapes(text, letter), None) is not None


def decode_stray_escapes(region: str, old: str, new: str) -> str:
    r"""``new`` with the ``\t`` and ``\n`` escapes that stand for real characters decoded.

    Args:
        region: the file's text that ``old`` matched (``\n`` line endings).
        old: the text searched for, as matched.
        new: the replacement as the model sent it.

    Raises:
        InvalidEditError: ``new`` is one line holding ``\n`` escapes while ``old`` spans
            several lines, and decoding them gives no line ``old`` has: whether they are line
            breaks or text in a string cannot be told.
    """
    if "\\" not in new:
        return new
    # Each escape: (offset of its backslash, length in new, the character it stands for).
    found: list[tuple[int, int, str]] = []
    for letter, char in _DECODED.items():
        if char not in old or char not in region:
            continue
        if char in new:
            continue  # new that holds the real character was not escaped once too often
        if _has_escape(old, letter) or _has_escape(region, letter):
            continue
        for offset in _escapes(new, letter):
            found.append((offset, 2, char))
    if not found:
        return new
    found = _with_crlf_pairs(new, sorted(found))
    flattened = "\n" in old and "\n" not in new and any(char == "\n" for _, _, char in found)
    decoded = _decode_aligned(old, new, found)
    if flattened and not _shares_a_line(old, decoded):
        raise InvalidEditError(_flattened_message(old, new))
    return decoded


def _with_crlf_pairs(new: str, found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    r"""The escapes, with a ``\r`` escape right before a ``\n`` one taken into it."""
    paired = []
    for offset, size, char in found:
        if char == "\n" and offset >= 2 and new[offset - 2 : offset] == "\\r":
            before = offset - 2
            if before == 0 or new[before - 1] != "\\":
                paired.append((before, size + 2, char))
                continue
        paired.append((offset, size, char))
    return paired


def _decode_aligned(old: str, new: str, found: list[tuple[int, int, str]]) -> str:
    """``new`` with those escapes decoded whose character lines up with one of ``old``."""
    if len(old) * len(new) > _ALIGN_BUDGET:
        return new
    pieces: list[str] = []
    done = 0
    decoded_at: list[int] = []
    for offset, size, char in found:
        pieces.append(new[done:offset])
        decoded_at.append(sum(map(len, pieces)))
        pieces.append(char)
        done = offset + size
    pieces.append(new[done:])
    candidate = "".join(pieces)
    matcher = SequenceMatcher(None, old, candidate, autojunk=False)
    equal = [(start, start + size) for _, start, size in matcher.get_matching_blocks() if size]
    keep = [any(start <= at < end for start, end in equal) for at in decoded_at]
    if all(keep):
        return candidate
    pieces = []
    done = 0
    for (offset, size, char), decode in zip(found, keep, strict=True):
        pieces += (new[done:offset], char if decode else new[offset : offset + size])
        done = offset + size
    pieces.append(new[done:])
    return "".join(pieces)


def _shares_a_line(old: str, decoded: str) -> bool:
    if "\n" not in decoded:
        return False
    old_keys = {key_ws(line) for line in old.split("\n")} - {""}
    return any(key_ws(line) in old_keys for line in decoded.split("\n"))


def _flattened_message(old: str, new: str) -> str:
    lines = old.count("\n") + 1
    escapes = sum(1 for _ in _escapes(new, "n"))
    return (
        f"new_string is a single line holding {escapes} literal \\n "
        f"{'escape' if escapes == 1 else 'escapes'}, while old_string spans {lines} lines "
        "with real line breaks, and read as line breaks they give none of old_string's lines: "
        "whether they are line breaks or text in a string cannot be told. The file was not "
        "changed. Send new_string with real line breaks; if the \\n is meant as text, make "
        "old_string a single line."
    )
