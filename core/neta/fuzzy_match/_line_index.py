"""Finding runs of whole lines whose keys equal a search's, in time linear in the file.

Two routes lead to the same answer. When the search holds a rare token (a run of characters
that every key keeps as it is), only the lines containing it are keyed and checked. Otherwise
every line is keyed once, the keys are joined into one string, and ``str.find`` looks for the
joined search keys in it, so a search is never compared line by line against every place.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from enum import Enum

from neta.fuzzy_match._text import Document, key_fold, key_rstrip, key_ws, key_ws_indent


class KeyKind(Enum):
    """How lines are compared: each kind ignores a little more than the one before."""

    RSTRIP = "rstrip"
    WS_INDENT = "ws_indent"
    WS = "ws"
    FOLD = "fold"


_KEY_OF: dict[KeyKind, Callable[[str], str]] = {
    KeyKind.RSTRIP: key_rstrip,
    KeyKind.WS_INDENT: key_ws_indent,
    KeyKind.WS: key_ws,
    KeyKind.FOLD: key_fold,
}

_TOKEN = re.compile(
    r"[^\s'\"`.\-\u00ab\u00bb\u2010-\u2015\u2018-\u201f\u2026\u2032\u2033\u2039\u203a\u2212]+"
)
"""A run no key changes: no whitespace, and nothing that folding maps from or to."""

_TOKENS_TRIED = 4
"""How many of a search's longest tokens are counted to pick the rarest."""

_CHECKED_PER_CANDIDATE = 8
"""How many lines checking one candidate is expected to take before a mismatch."""

_LINES_TOKENIZED = 256
"""At most about this many lines of a search are split into tokens."""


class LineIndex:
    """Line keys of one document, computed on demand and cached per kind."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self._keys: dict[KeyKind, list[str]] = {}
        self._some_keys: dict[KeyKind, dict[int, str]] = {kind: {} for kind in KeyKind}
        self._joined: dict[KeyKind, str] = {}
        self._lines_by_key: dict[KeyKind, dict[str, list[int]]] = {}
        self._token_counts: dict[str, int] = {}
        self._lines_by_token: dict[str, list[int]] = {}

    def _file_kind(self, kind: KeyKind) -> KeyKind:
        # Folding leaves ASCII alone, so an ASCII file's folded keys are its WS keys: share them.
        return KeyKind.WS if kind is KeyKind.FOLD and self.doc.folds_to_itself else kind

    def key(self, kind: KeyKind, line: int) -> str:
        """The key of one line."""
        kind = self._file_kind(kind)
        keys = self._keys.get(kind)
        if keys is not None:
            return keys[line]
        some = self._some_keys[kind]
        found = some.get(line)
        if found is None:
            found = some[line] = _KEY_OF[kind](self.doc.lines[line])
        return found

    def keyed(self, kind: KeyKind) -> list[str] | None:
        """The keys of every line if they are computed already, else None."""
        return self._keys.get(self._file_kind(kind))

    def key_getter(self, kind: KeyKind) -> Callable[[int], str]:
        """A fast ``key(kind, line)`` for hot loops: a list lookup once every line is keyed."""
        kind = self._file_kind(kind)
        keys = self._keys.get(kind)
        if keys is not None:
            return keys.__getitem__
        some, key, lines = self._some_keys[kind], _KEY_OF[kind], self.doc.lines

        def key_of(line: int) -> str:
            found = some.get(line)
            if found is None:
                found = some[line] = key(lines[line])
            return found

        return key_of

    def keys(self, kind: KeyKind) -> list[str]:
        """The keys of every line."""
        kind = self._file_kind(kind)
        keys = self._keys.get(kind)
        if keys is None:
            key = _KEY_OF[kind]
            keys = self._keys[kind] = list(map(key, self.doc.lines[: self.doc.line_count]))
        return keys

    def lines_with_key(self, kind: KeyKind, key: str) -> list[int]:
        """The 0-based lines whose key is ``key``."""
        kind = self._file_kind(kind)
        by_key = self._lines_by_key.get(kind)
        if by_key is None:
            by_key = self._lines_by_key[kind] = {}
            for line, line_key in enumerate(self.keys(kind)):
                by_key.setdefault(line_key, []).append(line)
        return by_key.get(key, [])

    def count_key(self, kind: KeyKind, line: str, limit: int) -> int:
        """How many lines have the key ``line`` has, counting no further than ``limit + 1``.

        Where the lines are not indexed by key, only the lines holding ``line``'s text as
        written are looked at (a line written with other spacing is not counted).
        """
        key = _KEY_OF[kind](line)
        if self._file_kind(kind) in self._lines_by_key:
            return min(len(self.lines_with_key(kind, key)), limit + 1)
        body = line.strip()
        if not body:
            return min(self.keys(kind).count(key), limit + 1)
        text, starts = self.doc.text, self.doc.line_starts
        key_at = self.key_getter(kind)
        count = 0
        position = text.find(body)
        while position != -1 and count <= limit:
            number = bisect_right(starts, position) - 1
            count += key_at(number) == key
            position = text.find(body, starts[number + 1])
        return count

    def windows(
        self,
        kind: KeyKind,
        search: Sequence[str],
        *,
        checked: Sequence[int] | None = None,
        overlapping: bool = True,
        limit: int | None = None,
    ) -> list[int]:
        """First lines of the runs of ``len(search)`` lines whose keys equal the search's.

        Args:
            kind: how lines are compared.
            search: the search, one item per line.
            checked: offsets into ``search`` that must match (default: all of them).
            overlapping: report runs that overlap an earlier one (else skip them, left first).
            limit: stop after this many runs.
        """
        size = len(search)
        if not size or size > self.doc.line_count:
            return []
        offsets = list(range(size)) if checked is None else list(checked)
        key = _KEY_OF[kind]
        indexed = self._file_kind(kind) in self._keys
        starts = None if indexed else self._starts_near_token(search, offsets)
        if starts is None:
            if checked is None:
                wanted_keys = [key(line) for line in search]
                return self._scan(kind, wanted_keys, overlapping, limit)
            first = offsets[0]
            first_key = key(search[first])
            keys = self.keys(kind)
            last_start = self.doc.line_count - size
            starts = [
                line - first
                for line, line_key in enumerate(keys)
                if line_key == first_key and 0 <= line - first <= last_start
            ]
            # With every line keyed, the few checked offsets filter all candidates in bulk.
            for offset in offsets[1:_CHECKED_PER_CANDIDATE]:
                at_offset = key(search[offset])
                starts = [start for start in starts if keys[start + offset] == at_offset]
            if len(offsets) <= _CHECKED_PER_CANDIDATE:
                return _chosen(starts, size, overlapping, limit)
        key_at = self.key_getter(kind)
        # Most candidates fail on their first lines; only those that pass are compared whole.
        head = [(offset, key(search[offset])) for offset in offsets[:_CHECKED_PER_CANDIDATE]]
        rest = offsets[_CHECKED_PER_CANDIDATE:]
        rest_keys: list[str] = []
        found: list[int] = []
        free_from = 0
        last_start = self.doc.line_count - size
        lines = self.doc.lines
        for start in starts:
            if start < free_from or not 0 <= start <= last_start:
                continue
            if not all(key_at(start + offset) == wanted for offset, wanted in head):
                continue
            # A candidate whose first lines agree is compared in bulk, without caching.
            if rest and not rest_keys:
                rest_keys = [key(search[offset]) for offset in rest]
            if not rest or [key(lines[start + offset]) for offset in rest] == rest_keys:
                found.append(start)
                if limit is not None and len(found) >= limit:
                    break
                if not overlapping:
                    free_from = start + size
        return found

    def _starts_near_token(self, search: Sequence[str], offsets: Sequence[int]) -> list[int] | None:
        """Candidate first lines from the search's rarest token, or None if that is no cheaper."""
        by_token: dict[str, int] = {}
        # A long search is sampled: any rare token will do, it need not be the rarest.
        for offset in offsets[:: max(1, len(offsets) // _LINES_TOKENIZED)]:
            for token in _TOKEN.findall(search[offset]):
                by_token.setdefault(token, offset)
        if not by_token:
            return None
        tried = sorted(by_token, key=len, reverse=True)[:_TOKENS_TRIED]
        token = min(tried, key=self._count)
        count = self._count(token)
        # A candidate costs a few times more per checked line than keying a line for the full
        # index does, and most candidates fail within their first lines: past a quarter of the
        # file's lines' worth of checks, the full index is the cheaper route.
        if count * min(len(offsets), _CHECKED_PER_CANDIDATE) * 4 > max(2_000, self.doc.line_count):
            return None
        offset = by_token[token]
        return sorted({line - offset for line in self.lines_with_token(token)})

    def _count(self, token: str) -> int:
        count = self._token_counts.get(token)
        if count is None:
            count = self._token_counts[token] = self.doc.text.count(token)
        return count

    def lines_with_token(self, token: str, limit: int | None = None) -> list[int]:
        """The 0-based lines containing ``token`` (at most ``limit`` of them)."""
        if limit is None:
            found = self._lines_by_token.get(token)
            if found is None:
                found = self._lines_by_token[token] = self._find_token(token, None)
            return found
        return self._find_token(token, limit)

    def _find_token(self, token: str, limit: int | None) -> list[int]:
        text = self.doc.text
        line_starts = self.doc.line_starts
        lines: list[int] = []
        position = text.find(token)
        while position != -1:
            line = bisect_right(line_starts, position) - 1
            lines.append(line)
            if len(lines) == limit:
                break
            position = text.find(token, line_starts[line + 1])
        return lines

    def _scan(
        self, kind: KeyKind, wanted: list[str], overlapping: bool, limit: int | None
    ) -> list[int]:
        kind = self._file_kind(kind)
        joined = self._joined.get(kind)
        if joined is None:
            joined = self._joined[kind] = "\n" + "\n".join(self.keys(kind)) + "\n"
        needle = "\n" + "\n".join(wanted) + "\n"
        found: list[int] = []
        line = counted_to = 0
        position = joined.find(needle)
        while position != -1:
            line += joined.count("\n", counted_to, position)
            counted_to = position
            found.append(line)
            if limit is not None and len(found) >= limit:
                break
            # Every line is framed by newlines, so resuming at the next one keeps line bounds.
            resume = joined.index("\n", position + 1) if overlapping else position + len(needle) - 1
            position = joined.find(needle, resume)
        return found


def _chosen(starts: list[int], size: int, overlapping: bool, limit: int | None) -> list[int]:
    """The runs starting at ``starts`` (sorted), without overlaps if so asked, up to ``limit``."""
    if overlapping:
        return starts if limit is None else starts[:limit]
    chosen: list[int] = []
    free_from = 0
    for start in starts:
        if start >= free_from:
            chosen.append(start)
            free_from = start + size
            if limit is not None and len(chosen) >= limit:
                break
    return chosen
