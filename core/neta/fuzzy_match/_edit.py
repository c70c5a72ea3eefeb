"""Where a match lies in the text, and the spans of it an edit replaces with what.

Matches inside the text are replaced as found (a match inside a line written onto the file's
own characters); matches of whole lines are merged onto the file's lines (see ``_merge``),
a block re-indented by one shift without a diff at all.
"""

from __future__ import annotations

from neta.errors import NoMatchError
from neta.fuzzy_match._diff import Opcode, line_diff
from neta.fuzzy_match._inline import keep_file_chars
from neta.fuzzy_match._merge import StaleLineError, merge, shifted_whole
from neta.fuzzy_match._messages import stale_line
from neta.fuzzy_match._strategies import Found
from neta.fuzzy_match._text import Document, split_lines


def span(doc: Document, found: Found, start: int) -> tuple[int, int]:
    """Where one match lies in ``doc.text``."""
    if not found.by_lines:
        return start, found.end_of(start)
    last = start + found.size - 1
    end = doc.line_end(last)
    if found.trailing_newline and doc.has_newline_after(last):
        end += 1
    return doc.line_starts[start], end


def line_range(doc: Document, found: Found, start: int) -> tuple[int, int]:
    """The first and last line (1-based) of one match; a matched empty last line counts."""
    if found.by_lines:
        return start + 1, start + found.size
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


def edits(doc: Document, found: Found, new: str) -> list[tuple[int, int, str]]:
    """The ``(start, end, replacement)`` spans of ``doc.text`` the edit replaces."""
    adapted = found.adapt_new(new)
    if not found.by_lines:
        return [_text_edit(doc, found, start, adapted) for start in found.starts]
    old_lines = found.search.split("\n")
    new_lines, _ = split_lines(adapted)
    opcodes: list[Opcode] | None = None
    # replace_all often finds the same block many times: it is merged once.
    done: dict[tuple[str, ...], list[str]] = {}
    edits = []
    for start in found.starts:
        last = start + found.size - 1
        block = doc.lines[start : last + 1]
        merged = done.get(tuple(block))
        if merged is None:
            shifted = None if block == old_lines else shifted_whole(old_lines, new_lines, block)
            if block == old_lines:
                merged = new_lines
            elif shifted is not None:
                merged = shifted
            else:
                if opcodes is None:
                    opcodes = line_diff(old_lines, new_lines)
                try:
                    merged = merge(old_lines, new_lines, block, opcodes)
                except StaleLineError as exc:
                    message = stale_line(doc, found, start, exc.offsets, exc.reason)
                    raise NoMatchError(message) from None
            done[tuple(block)] = merged
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
