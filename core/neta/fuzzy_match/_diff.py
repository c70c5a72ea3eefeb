"""The line diff from a search to its replacement, fast on any size of edit.

``difflib.SequenceMatcher`` is quadratic when many lines alternate between kept and changed
(every other line of a whole file rewritten), which took seconds on a 20,000-line file. So the
diff of a big edit is cut first at the lines both sides share and hold only once (as patience
diff does), and ``SequenceMatcher`` only diffs the short stretches between them. A stretch
still too big for it is one replaced block: a correct diff, only a coarser one.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from difflib import SequenceMatcher

Opcode = tuple[str, int, int, int, int]
"""``(tag, old_from, old_to, new_from, new_to)`` as ``SequenceMatcher.get_opcodes`` gives."""

_STRETCH_BUDGET = 250_000
"""The largest ``len(old) * len(new)`` stretch given to ``SequenceMatcher``."""


def line_diff(old_lines: Sequence[str], new_lines: Sequence[str]) -> list[Opcode]:
    """The opcodes turning ``old_lines`` into ``new_lines``, in order, covering both."""
    # Most edits are small enough for SequenceMatcher alone; anchors only split big ones.
    if len(old_lines) * len(new_lines) <= _STRETCH_BUDGET:
        return _joined(_stretch(old_lines, new_lines))
    opcodes: list[Opcode] = []
    old_from = new_from = 0
    for old_at, new_at in [*_anchors(old_lines, new_lines), (len(old_lines), len(new_lines))]:
        if old_at - old_from == 1 == new_at - new_from:  # the usual stretch: one changed line
            same = old_lines[old_from] == new_lines[new_from]
            opcodes.append(("equal" if same else "replace", old_from, old_at, new_from, new_at))
        elif old_at > old_from or new_at > new_from:
            stretch = _stretch(old_lines[old_from:old_at], new_lines[new_from:new_at])
            opcodes += _shifted(stretch, old_from, new_from)
        if old_at < len(old_lines):
            opcodes.append(("equal", old_at, old_at + 1, new_at, new_at + 1))
        old_from, new_from = old_at + 1, new_at + 1
    return _joined(opcodes)


def _anchors(old_lines: Sequence[str], new_lines: Sequence[str]) -> list[tuple[int, int]]:
    """Pairs of positions of lines held once by each side, increasing on both sides.

    Of the lines unique to both sides, the longest run in the same order on both is kept
    (patience sorting), so the anchors never cross.
    """
    old_counts, new_counts = Counter(old_lines), Counter(new_lines)
    new_at = {line: at for at, line in enumerate(new_lines) if new_counts[line] == 1}
    pairs = [
        (at, new_at[line])
        for at, line in enumerate(old_lines)
        if old_counts[line] == 1 and line in new_at
    ]
    # Longest increasing subsequence of the new positions, in O(n log n).
    tops: list[int] = []
    top_index: list[int] = []
    previous = [-1] * len(pairs)
    for index, (_, position) in enumerate(pairs):
        pile = bisect_left(tops, position)
        if pile == len(tops):
            tops.append(position)
            top_index.append(index)
        else:
            tops[pile] = position
            top_index[pile] = index
        previous[index] = top_index[pile - 1] if pile else -1
    chain: list[tuple[int, int]] = []
    index = top_index[-1] if top_index else -1
    while index != -1:
        chain.append(pairs[index])
        index = previous[index]
    return chain[::-1]


def _stretch(old_lines: Sequence[str], new_lines: Sequence[str]) -> list[Opcode]:
    """The opcodes of one stretch between anchors, ``SequenceMatcher``'s when it is cheap."""
    limit = min(len(old_lines), len(new_lines))
    head = 0
    while head < limit and old_lines[head] == new_lines[head]:
        head += 1
    tail = 0
    while tail < limit - head and old_lines[-1 - tail] == new_lines[-1 - tail]:
        tail += 1
    old_end, new_end = len(old_lines) - tail, len(new_lines) - tail
    old_middle, new_middle = old_lines[head:old_end], new_lines[head:new_end]
    opcodes: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    if not old_middle and not new_middle:
        pass  # the stretch is all kept lines
    elif (
        not old_middle
        or not new_middle
        or len(old_middle) * len(new_middle) > _STRETCH_BUDGET
        or set(old_middle).isdisjoint(new_middle)
    ):
        tag = "insert" if not old_middle else "delete" if not new_middle else "replace"
        opcodes.append((tag, head, old_end, head, new_end))
    else:
        matcher = SequenceMatcher(None, old_middle, new_middle, autojunk=False)
        opcodes += _shifted(matcher.get_opcodes(), head, head)
    if tail:
        opcodes.append(("equal", old_end, len(old_lines), new_end, len(new_lines)))
    return opcodes


def _shifted(opcodes: Sequence[Opcode], old_by: int, new_by: int) -> list[Opcode]:
    return [
        (tag, old_from + old_by, old_to + old_by, new_from + new_by, new_to + new_by)
        for tag, old_from, old_to, new_from, new_to in opcodes
    ]


def _joined(opcodes: Sequence[Opcode]) -> list[Opcode]:
    """The opcodes with neighbouring ones of the same tag made one."""
    joined: list[Opcode] = []
    for opcode in opcodes:
        if joined and joined[-1][0] == opcode[0]:
            tag, old_from, _, new_from, _ = joined[-1]
            joined[-1] = (tag, old_from, opcode[2], new_from, opcode[4])
        else:
            joined.append(opcode)
    return joined
