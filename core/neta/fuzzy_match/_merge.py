"""Applying an edit onto a block the matcher found: the file's own lines win where they may.

The edit is the line diff from ``old`` to ``new``. Lines it keeps are copied from the file, so
a model's stale or re-typed copy of them is never written back. Lines it rewrites or removes
must equal the file's up to whitespace (and typographic characters), else the edit is refused.
Lines it adds are re-indented to the file's indentation, keeping their relative nesting; they
may not repeat a search line the file lacks (that would write the stale copy after all), and
they go only where a line the file has places them.

Each line of ``old`` faces one line of the block (or none, when the file lacks it), in order;
a block line no line of ``old`` faces was skipped by the model. It stays where it is, after
the line of ``old`` before it, and an edit that would have to put new text on one side of it
or the other (an added line next to it, a change around it) is refused: which side the model
meant cannot be told.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rapidfuzz import fuzz

from neta.fuzzy_match._diff import Opcode
from neta.fuzzy_match._indent import Reindent, UnclearIndentError, indent_of, uniform_shift
from neta.fuzzy_match._inline import keep_file_chars
from neta.fuzzy_match._text import key_fold, key_ws

_PAIRING_BUDGET = 400
"""The largest ``old * new`` lines of one changed stretch paired by similarity."""

_PAIRING_MIN = 50.0
"""How similar (0-100) a new line must be to an old one to count as that line, changed."""

_Step = tuple[int, int | None, bool]
"""One line of new: its index in new, the offset in old of the line it keeps or changes
(None for an added line), and whether it is kept as the file has it."""


class StaleLineError(Exception):
    """An edit that relies on a line the file does not have (internal: becomes NoMatchError).

    Attributes:
        offsets: 0-based positions in ``old`` of the lines at fault.
        reason: ``"changed"`` (the edit rewrites or removes them), ``"repeated"`` (new_string
            repeats them as new lines), ``"placed"`` (they are all that locate an insertion,
            or an insertion lies next to them), ``"indent"`` (they disagree on how an added
            line between them is indented) or ``"skipped"`` (the block has lines ``old``
            skips right where the edit writes, listed in ``skipped``).
        skipped: 0-based positions in the block of the lines ``old`` skips, for ``"skipped"``.
    """

    def __init__(self, offsets: Sequence[int], reason: str, skipped: Sequence[int] = ()) -> None:
        super().__init__(offsets, reason)
        self.offsets = list(offsets)
        self.reason = reason
        self.skipped = list(skipped)


def merge(
    old_lines: Sequence[str],
    new_lines: Sequence[str],
    block: Sequence[str],
    opcodes: Sequence[Opcode],
    facing: Sequence[int | None] | None = None,
    *,
    tabs: bool = False,
) -> list[str]:
    """The lines that replace ``block``, the file's lines that ``old_lines`` matched.

    ``facing`` says which block line each line of ``old_lines`` faces (None: none); by
    default the one at its own offset. ``tabs``: the file indents with tabs, so lines new
    indents with spaces alone are indented with tabs.

    Raises:
        StaleLineError: a line the diff rewrites or removes differs from the file's; an added
            line repeats a line of ``old_lines`` that differs from the file's; an added line
            is not between two lines the file verifiably has; its indentation cannot be told;
            or it, or a change, lies where the block has a line ``old_lines`` skips.
    """
    if facing is None:
        facing = range(len(old_lines))
    faced = [block[at] if at is not None else "" for at in facing]
    verified = [
        at is not None
        and (theirs == ours or theirs.strip() == ours.strip() or key_fold(theirs) == key_fold(ours))
        for theirs, ours, at in zip(faced, old_lines, facing, strict=True)
    ]
    after = _skipped_after(facing, len(block))
    # A block the search matched line for line (up to whitespace) needs none of the checks.
    checked = not all(verified) or any(after)
    stale = _stale_keys([key_fold(line) for line in old_lines], verified) if checked else {}
    steps: list[_Step] = []
    for tag, old_from, old_to, new_from, new_to in opcodes:
        if tag == "equal":
            steps += [(new_from + k, old_from + k, True) for k in range(old_to - old_from)]
            continue
        paired = _pairing(old_lines[old_from:old_to], new_lines[new_from:new_to])
        hunk = [
            (new_from + k, None if at is None else old_from + at, False)
            for k, at in enumerate(paired)
        ]
        if checked:
            # A line old skips where the edit writes is named first: it is what to fix.
            _check_skipped(after, old_from, old_to, hunk)
            if old_from == old_to:
                for gap in _sliding(old_lines, new_lines[new_from:new_to], old_from):
                    if after[gap]:
                        raise StaleLineError([max(gap - 1, 0)], "skipped", after[gap])
            _check_hunk(old_lines, new_lines, verified, stale, (old_from, old_to, new_from, new_to))
        steps += hunk
    reindent = Reindent(old_lines, faced, verified, tabs=tabs)
    try:
        written = _indented(old_lines, new_lines, faced, steps, reindent)
    except UnclearIndentError as exc:
        raise StaleLineError(exc.offsets, "indent") from None
    # Trailing whitespace old has where the file has none is garbling, and new has it too.
    garbled = any(
        same and ours.strip() and ours != ours.rstrip() and theirs == theirs.rstrip()
        for ours, theirs, same in zip(old_lines, faced, verified, strict=True)
    )
    merged: list[str] = [block[skipped] for skipped in after[0]]
    flushed = 0  # the lines of old whose skipped block lines are written already
    for (_, at, kept), line in zip(steps, written, strict=True):
        if at is not None:
            # Lines old skips after lines the edit removes stay where they are.
            for offset in range(flushed, at):
                merged += [block[skipped] for skipped in after[offset + 1]]
            flushed = max(flushed, at)
        if at is not None and kept:
            if facing[at] is not None:  # a line the file lacks is not written back
                merged.append(faced[at])
        elif at is not None and verified[at] and faced[at].strip() != old_lines[at].strip():
            # A changed line keeps the file's characters where the edit keeps old's.
            indent = indent_of(line)
            body = keep_file_chars(faced[at].strip(), old_lines[at].strip(), line[len(indent) :])
            merged.append(_trimmed(indent + body, garbled))
        else:
            merged.append(_trimmed(line, garbled))
        if at is not None and at >= flushed:
            merged += [block[skipped] for skipped in after[at + 1]]
            flushed = at + 1
    for offset in range(flushed, len(old_lines)):
        merged += [block[skipped] for skipped in after[offset + 1]]
    return merged


def _trimmed(line: str, garbled: bool) -> str:
    return line.rstrip() if garbled else line


def _skipped_after(facing: Sequence[int | None], size: int) -> list[list[int]]:
    """For each gap of old, the block lines no line of old faces that stand there.

    Gap ``g`` is the one after line ``g - 1`` of old (gap 0: before its first line). The lines
    after the block line that a line of old faces, up to the next one faced, are the lines the
    model skipped there; a line of old facing none has none after it.
    """
    after: list[list[int]] = [[] for _ in range(len(facing) + 1)]
    faced = [(offset, at) for offset, at in enumerate(facing) if at is not None]
    for (offset, at), (_, following) in zip(faced, [*faced[1:], (None, size)], strict=True):
        after[offset + 1] = list(range(at + 1, following))
    after[0] = list(range(faced[0][1] if faced else size))
    return after


def _check_skipped(
    after: Sequence[Sequence[int]],
    old_from: int,
    old_to: int,
    hunk: Sequence[_Step],
) -> None:
    """Refuse a changed stretch that would put text on one side of a line old skips.

    The lines it changes or removes must face adjacent block lines, and a line it adds must
    not stand where old skips a line: before or after that line, the model did not say.
    """
    for gap in range(old_from + 1, old_to):
        if after[gap]:
            raise StaleLineError([gap - 1, gap], "skipped", after[gap])
    gap = old_from  # the gap of old just before each step of the stretch
    for _, at, _ in hunk:
        if at is not None:
            gap = at + 1
        elif after[gap]:
            raise StaleLineError([max(gap - 1, 0)], "skipped", after[gap])


def _sliding(old_lines: Sequence[str], added: Sequence[str], gap: int) -> list[int]:
    """Every gap of old where lines added at ``gap`` could as well go.

    Added lines that end (or start) with the line of old next to them can move across it:
    ``x`` and a blank line added after a blank line are a blank line and ``x`` added before
    it; ``x`` and ``f(a)`` added after ``f(a)`` are ``f(a)`` and ``x`` added before it. The
    diff picks one; the model may have meant either (``return;`` and ``if (err) {`` too). Not
    across a closing bracket line when the lines added close every bracket they open: there
    the diff's choice closes the block first and adds a whole one after it, and it stays.
    """
    gaps = [gap]
    whole = _balanced(added)
    for step in (-1, 1):
        moved = [key_ws(line) for line in added]
        at = gap
        while moved:
            neighbour = at - 1 if step < 0 else at
            if not 0 <= neighbour < len(old_lines):
                break
            edge = -1 if step < 0 else 0
            line = old_lines[neighbour]
            if key_ws(line) != moved[edge] or (whole and _CLOSER.match(line)):
                break
            moved = [moved[-1], *moved[:-1]] if step < 0 else [*moved[1:], moved[0]]
            at += step
            gaps.append(at)
    return gaps


_CLOSER = re.compile(r"\s*[)\]}]")
"""A line that starts by closing a bracket."""


def _balanced(lines: Sequence[str]) -> bool:
    """Whether ``lines`` close as many brackets as they open (strings are not told apart)."""
    text = "".join(lines)
    return sum(text.count(char) for char in "([{") == sum(text.count(char) for char in ")]}")


def shifted_whole(
    old_lines: Sequence[str], new_lines: Sequence[str], block: Sequence[str], *, tabs: bool = False
) -> list[str] | None:
    """``new_lines`` re-indented, when re-indenting ``old_lines`` alike gives ``block`` exactly.

    That is: every line of old is the file's but for its indentation, and one uniform mapping
    takes each indentation of old to one of the file's. Then every line new keeps from old
    comes out as the file has it, and ``merge`` would give the same lines, without needing the
    diff; otherwise None.
    """
    mapping: dict[str, str] = {}
    blank: list[tuple[str, str]] = []
    for ours, theirs in zip(old_lines, block, strict=True):
        body = ours.lstrip(" \t")
        if not body.strip():
            if theirs.strip():
                return None
            if ours != theirs:
                blank.append((ours, theirs))
            continue
        if not theirs.endswith(body) or theirs[: len(theirs) - len(body)].strip(" \t"):
            return None
        indent, mapped = ours[: len(ours) - len(body)], theirs[: len(theirs) - len(body)]
        if mapping.setdefault(indent, mapped) != mapped:
            return None
    if uniform_shift(mapping.items()) is None:
        return None
    reindent: list[Reindent] = []

    def shift(line: str) -> str:
        if not line:
            return line
        body = line.lstrip(" \t")
        indent = line[: len(line) - len(body)]
        known = mapping.get(indent)
        if known is None:
            if not reindent:
                reindent.append(Reindent(old_lines, block, [True] * len(block), tabs=tabs))
            known = mapping[indent] = reindent[0].shifted(indent + "x", 0)[:-1]
        return known + body

    if any(shift(ours) != theirs for ours, theirs in blank):
        return None
    return [shift(line) for line in new_lines]


def _pairing(old: Sequence[str], new: Sequence[str]) -> list[int | None]:
    """For each line of a changed stretch of new, the offset of the old line it changes.

    Stretches of equal length pair line by line; others by similarity, in order, so the
    lines left over are the ones new adds.
    """
    if len(old) == len(new):
        return list(range(len(new)))
    if not old or not new or len(old) * len(new) > _PAIRING_BUDGET:
        return [k if k < len(old) else None for k in range(len(new))]
    old_keys, new_keys = [key_ws(line) for line in old], [key_ws(line) for line in new]
    # best[i][j]: the most similarity pairing old[:i] with new[:j] in order can collect.
    best = [[0.0] * (len(new) + 1) for _ in range(len(old) + 1)]
    for i in range(1, len(old) + 1):
        for j in range(1, len(new) + 1):
            score = fuzz.ratio(old_keys[i - 1], new_keys[j - 1])
            take = best[i - 1][j - 1] + score if score >= _PAIRING_MIN else -1.0
            best[i][j] = max(best[i - 1][j], best[i][j - 1], take)
    paired: list[int | None] = [None] * len(new)
    i, j = len(old), len(new)
    while i and j:
        if best[i][j] == best[i - 1][j]:
            i -= 1
        elif best[i][j] == best[i][j - 1]:
            j -= 1
        else:
            paired[j - 1] = i - 1
            i, j = i - 1, j - 1
    return paired


def _indented(
    old_lines: Sequence[str],
    new_lines: Sequence[str],
    block: Sequence[str],
    steps: Sequence[_Step],
    reindent: Reindent,
) -> list[str]:
    """Each line of new as it is written (kept lines too, though the file's are used)."""
    if reindent.uniform:
        written = []
        previous = -1
        for index, at, kept in steps:
            anchor = at if at is not None else previous
            # A kept line is written as the file has it: its new form is never used.
            written.append("" if kept else reindent.shifted(new_lines[index], max(anchor, 0)))
            previous = anchor
        return written
    # No one shift: each line the file has keeps its own indentation ...
    faced: list[str | None] = []
    for index, at, _ in steps:
        line = new_lines[index]
        if at is not None and line.strip() and old_lines[at].strip() and block[at].strip():
            faced.append(reindent.file_indent(at) + line.lstrip(" \t"))
        else:
            faced.append(None)
    # ... and an added line is placed by its neighbours' indentation, which must agree. (A kept
    # line is written as the file has it, or not at all where the file lacks it.)
    written = []
    for position, (indented, (_, _, kept)) in enumerate(zip(faced, steps, strict=True)):
        if indented is not None:
            written.append(indented)
        else:
            written.append("" if kept else _between(new_lines, steps, faced, position, reindent))
    return written


def _between(
    new_lines: Sequence[str],
    steps: Sequence[_Step],
    faced: Sequence[str | None],
    position: int,
    reindent: Reindent,
) -> str:
    """An added line indented as the nearest file-facing lines above and below imply."""
    line = new_lines[steps[position][0]]
    ours = reindent.width(indent_of(line))
    hints: list[tuple[int, str]] = []
    offsets: list[int] = []
    for direction in (-1, 1):
        near = position + direction
        while 0 <= near < len(steps) and faced[near] is None:
            near += direction
        if not 0 <= near < len(steps):
            continue
        theirs = indent_of(faced[near] or "")
        neighbour = reindent.width(indent_of(new_lines[steps[near][0]]))
        hints.append((max(0, reindent.width(theirs) + ours - neighbour), theirs))
        offsets.append(steps[near][1] or 0)
    if not hints:
        return line
    if len({columns for columns, _ in hints}) > 1:
        raise UnclearIndentError(offsets)
    columns, like = hints[0]
    return reindent.columns(columns, like) + line.lstrip(" \t")


def _check_hunk(
    old_lines: Sequence[str],
    new_lines: Sequence[str],
    verified: Sequence[bool],
    stale: dict[str, int],
    hunk: tuple[int, int, int, int],
) -> None:
    """Refuse a changed stretch that relies on lines of the search the file does not have."""
    old_from, old_to, new_from, new_to = hunk
    changed = [offset for offset in range(old_from, old_to) if not verified[offset]]
    if changed:
        raise StaleLineError(changed, "changed")
    if not _located(old_lines, verified, old_from, old_to):
        raise StaleLineError(_neighbours(old_lines, old_from, old_to), "placed")
    for line in new_lines[new_from:new_to]:
        repeated = stale.get(key_fold(line))
        if repeated is not None:
            raise StaleLineError([repeated], "repeated")
    if old_from == old_to:
        # An insertion goes between two lines the file verifiably has, never next to a gap.
        sides = [offset for offset in (old_from - 1, old_from) if 0 <= offset < len(old_lines)]
        if not all(verified[offset] for offset in sides):
            raise StaleLineError(sides, "placed")


def _stale_keys(old_keys: Sequence[str], verified: Sequence[bool]) -> dict[str, int]:
    """Keys of the search's non-blank lines the file does not have, with their offsets.

    A key that some other search line does have in the file is known text, so it is left out.
    """
    known = {key for key, same in zip(old_keys, verified, strict=True) if same}
    stale: dict[str, int] = {}
    for offset, (key, same) in enumerate(zip(old_keys, verified, strict=True)):
        if not same and key and key not in known:
            stale.setdefault(key, offset)
    return stale


def _located(old_lines: Sequence[str], verified: Sequence[bool], start: int, end: int) -> bool:
    """Whether a file line the search has verbatim pins down the edit of ``old_lines[start:end]``.

    The lines it removes do when one is not blank (they were verified before). Otherwise the
    nearest non-blank line above or below must be the file's, and blank lines crossed on the
    way must face blank lines.
    """
    if any(line.strip() for line in old_lines[start:end]):
        return True
    for index, step in ((start - 1, -1), (end, 1)):
        while 0 <= index < len(old_lines) and verified[index] and not old_lines[index].strip():
            index += step
        if 0 <= index < len(old_lines) and verified[index]:
            return True
    return False


def _neighbours(old_lines: Sequence[str], start: int, end: int) -> list[int]:
    """The offsets of the nearest non-blank lines above and below ``old_lines[start:end]``."""
    above = next((i for i in range(start - 1, -1, -1) if old_lines[i].strip()), None)
    below = next((i for i in range(end, len(old_lines)) if old_lines[i].strip()), None)
    return [offset for offset in (above, below) if offset is not None]
