"""The line keys the matcher compares: their fast paths give what their definitions say."""

from __future__ import annotations

import random

from neta.fuzzy_match._text import _FOLD, key_fold, key_ws, key_ws_indent

_PIECES = [" ", "  ", "\t", "\u00a0", "\u3000", "\u2003", "\x0b", "\x0c", "\r", "\x1c", "\x85"]
_PIECES += ["\u2028", "a", "b", "_", "-", "--", "\u2014", "\u2026", "\u201c", "'", ".", "x"]


def _random_lines(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 10))) for _ in range(count)]


def test_key_ws_is_the_words_joined_by_single_spaces():
    for line in _random_lines(1, 20_000):
        assert key_ws(line) == " ".join(line.split()), repr(line)


def test_key_ws_indent_keeps_the_indentation_and_joins_the_words():
    for line in _random_lines(2, 20_000):
        rest = line.lstrip()
        assert key_ws_indent(line) == line[: len(line) - len(rest)] + " ".join(rest.split())


def test_key_fold_folds_then_joins_the_words():
    for line in _random_lines(3, 20_000):
        folded = " ".join(line.translate(_FOLD).split())
        assert key_fold(line) == folded.replace(" -- ", " - "), repr(line)
