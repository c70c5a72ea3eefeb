r"""The common case first: ``old_string`` found verbatim, at a cost of ``str.find``.

Most edits quote the file exactly and once. Such an edit is checked and applied on the content
as given, with ``str.find``, ``str.count`` and ``str.replace``: no line index, no normalised
copy of the file. Whatever this path cannot settle alone (a CRLF file where the text spans
lines, a match at the very end of the file, several places without ``replace_all``, nothing
found) is left to the strategies, which then decide exactly as they always do.

Also here: the bound on what ``replace_all`` may produce, checked before anything is built.
"""

from __future__ import annotations

from neta.errors import InvalidEditError
from neta.fuzzy_match._escapes import decode_stray_escapes

GROWTH_LIMIT = 10
"""``replace_all`` may make a file at most this many times its size (past ``GROWTH_FLOOR``)."""

GROWTH_FLOOR = 1 << 20
"""Growing a file to this many characters is always allowed: a small file may grow freely."""

SIZE_LIMIT = 64 << 20
"""No edit makes a file longer than this many characters (64 MiB)."""

_BOM = "\ufeff"


def check_output_size(before: int, after: int, count: int) -> None:
    """Refuse a ``replace_all`` whose result of ``after`` characters is out of bounds.

    Raises:
        InvalidEditError: ``after`` exceeds 64 MiB, or ten times ``before`` (and 1 MiB).
    """
    limit = min(SIZE_LIMIT, max(GROWTH_LIMIT * before, GROWTH_FLOOR))
    if after <= limit:
        return
    why = "64 MiB" if limit == SIZE_LIMIT else f"{GROWTH_LIMIT} times its size"
    raise InvalidEditError(
        f"replace_all would replace {count} places and make the file {after} characters long "
        f"(from {before}), more than {why}, so the edit was refused before being made. The "
        "file was not changed. Check that old_string is what you mean to replace and that "
        "new_string does not repeat more than it should, or make the change in smaller edits."
    )


def replace_exact(
    content: str, old: str, new: str, replace_all: bool
) -> tuple[str, int, int, int] | None:
    r"""The edit when ``old`` occurs verbatim and this path can settle it, else None.

    Args:
        content: the whole file as given.
        old: the search, ``\n`` line endings, BOM removed.
        new: the replacement, likewise.
        replace_all: replace every (non-overlapping) place.

    Returns:
        ``(new content, count, first line, last line)`` of the first place, or None.

    Raises:
        InvalidEditError: the result of ``replace_all`` would be too large, or ``new`` is
            flattened onto one line in a way that cannot be decoded.
    """
    # Where the text holds a line break, a CRLF file's occurrences differ from the search's.
    if ("\n" in old or "\n" in new) and "\r" in content:
        return None
    position = content.find(old)
    if position == -1 or content.endswith(old):
        return None
    new = decode_stray_escapes(old, old, new)
    if new == old:
        return None  # the edit changes nothing: the strategies say so
    if replace_all:
        if new.endswith("\n\n") and not old.endswith("\n"):
            return None  # whether each place is a whole line decides: the strategies know
        count = content.count(old)
        check_output_size(len(content), len(content) + count * (len(new) - len(old)), count)
        edited = content.replace(old, new)
    else:
        if content.find(old, position + 1) != -1:
            return None
        count = 1
        end = position + len(old)
        if new.endswith("\n\n") and not old.endswith("\n") and content[end] == "\n":
            line_start = content.rfind("\n", 0, position) + 1
            if not content[line_start:position].lstrip(_BOM).strip():
                # Blank lines added after whole lines come out as the line strategies write
                # them: new's final newline ends its last line.
                new = new[:-1]
        # The first occurrence is the one found: one pass builds the result, no slices.
        edited = content.replace(old, new, 1)
    first = content.count("\n", 0, position) + 1
    return edited, count, first, first + old.count("\n", 0, max(len(old) - 1, 0))
