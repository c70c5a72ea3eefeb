"""The matcher against the mistakes models make: each case once wrote a wrong edit or misled.

The property tests build seeded random files and searches: an exact unique search must edit
like ``str.replace``, a fuzzy edit must stay inside the region it reports and write no line
it has not verified, and a refusal must leave the file alone.
"""

from __future__ import annotations

import os
import random
from collections import Counter

import pytest

from neta import patch_file
from neta.fuzzy_match import (
    AmbiguousMatchError,
    InvalidEditError,
    MatchError,
    NoMatchError,
    fuzzy_replace,
)
from neta.fuzzy_match._text import key_fold

STALE = "matched only approximately"

FETCH = (
    "def fetch(self):\n"
    "    data = self.read()\n"
    "    rows = parse(data)\n"
    "    count = len(rows)\n"
    "    return rows\n"
)

# id, content, old, new, expected content
WRITES = [
    pytest.param(
        "a\n  b\nc\n",
        "   b\n",
        "   B",
        "a\n  B\nc\n",
        id="line-strategy-new-without-final-newline-does-not-join-next-line",
    ),
    pytest.param(
        "a\n  b\nc\n",
        "   b",
        "   B\n",
        "a\n  B\nc\n",
        id="line-strategy-new-with-final-newline-adds-no-blank-line",
    ),
    pytest.param(
        "if a:\n    x = 1\n    y = 2\nz = 3\n",
        "x = 1\ny = 2\n",
        "x = 1",
        "if a:\n    x = 1\nz = 3\n",
        id="line-strategy-deletion-without-final-newline-does-not-join",
    ),
    pytest.param(
        "\tif a:\n\t    b()\n",
        "if a:\n    b()",
        "if a:\n    b()\n    c()",
        "\tif a:\n\t    b()\n\t    c()\n",
        id="added-line-copies-its-siblings-mixed-indentation",
    ),
    pytest.param(
        "\tif a:\n\t    b()\n",
        "if a:\n    b()",
        "if a:\n    b()\n    if c:\n        d()",
        "\tif a:\n\t    b()\n\t    if c:\n\t        d()\n",
        id="added-nested-lines-extend-their-siblings-indentation",
    ),
    pytest.param(
        "a\n\nb",
        "b",
        "",
        "a\n",
        id="deleting-the-last-line-keeps-the-blank-line-before-it",
    ),
    pytest.param(
        "x = 1\n\n\ty = 2",
        "    y = 2\n",
        "",
        "x = 1\n",
        id="line-strategy-deleting-the-last-line-keeps-the-lines-before-it",
    ),
    pytest.param(
        "one\r\ntwo\r\nthree\r\n",
        "two\r",
        "TWO\r",
        "one\r\nTWO\r\nthree\r\n",
        id="final-cr-copied-from-a-crlf-file-is-no-second-cr",
    ),
    pytest.param(
        "one\ntwo\nthree\n",
        "two\r",
        "TWO\r",
        "one\nTWO\nthree\n",
        id="final-cr-writes-no-crlf-into-an-lf-file",
    ),
    pytest.param(
        "if ready: start(now)\n",
        "  start(now)  ",
        "  stop(now)  ",
        "if ready: stop(now)\n",
        id="trimmed-boundary-without-line-breaks-may-match-mid-line",
    ),
    pytest.param(
        "if x:\n        foo()\n",
        "\n    foo()\n",
        "\n    foo(1)\n",
        "if x:\n        foo(1)\n",
        id="trimmed-boundary-with-line-breaks-matches-a-whole-line",
    ),
    pytest.param(
        "def f():\n    a = 1\n    b = 2\n",
        "    a = 1\n    b = 2\n",
        "    ...\n",
        "def f():\n    ...\n",
        id="bare-ellipsis-replacing-a-body-is-python-code",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "expected"), WRITES)
def test_fuzzy_replace_adversarial_edit_writes_expected_content(content, old, new, expected):
    assert fuzzy_replace(content, old, new).content == expected


# id, content, old, new, error type, what the message says
REFUSALS = [
    pytest.param(
        FETCH,
        FETCH.replace("parse(data)", "parse(data, strict)"),
        FETCH.replace("parse(data)", "parse(data, strict)").replace(
            "    count", "    rows = parse(data, strict)\n    count"
        ),
        NoMatchError,
        "adds a copy of a line of old_string that is not the file's",
        id="stale-line-repeated-by-new",
    ),
    pytest.param(
        "def a():\n    x = 1\n    start(x)\n    stop(x)\n    zzz = 9\n    www = 8\n",
        "    start(x)\n    stop(x)\n    foo(bar)\n    baz(qux)",
        "    start(x)\n    stop(x)\n    foo(bar)\n    NEW()\n    baz(qux)",
        NoMatchError,
        "the lines around the place where new_string adds or removes text are not the file's",
        id="insert-between-lines-the-file-does-not-have",
    ),
    pytest.param(
        "def a():\n    x = 1\n}\n}\n    zzz = 9\n    www = 8\n",
        "}\n}\n    foo(bar)\n    baz(qux)",
        "}\n}\n    foo(bar)\n    NEW()\n    baz(qux)",
        NoMatchError,
        "was not found in the file",
        id="block-sharing-only-braces-is-no-match",
    ),
    pytest.param(
        "result = self.foo()\n",
        "\n    foo()\n",
        "\n    foo(1)\n",
        NoMatchError,
        "part of a longer line",
        id="line-broken-search-inside-an-expression",
    ),
    pytest.param(
        "    return x + 1\n",
        "\nreturn x\n",
        "\nreturn y\n",
        NoMatchError,
        "part of a longer line",
        id="line-broken-search-matching-a-line-prefix",
    ),
    pytest.param(
        "x = 1\ny = 2\n",
        "x = 1\\ny = 2",
        'x = 1\ny = "\\n"',
        InvalidEditError,
        "real line breaks as well as backslash escapes",
        id="escaped-old-with-unescaped-new-holding-escapes",
    ),
    pytest.param(
        "x = 1\ny = 2\n",
        "x = 1\ny = 3",
        "x = 1",
        NoMatchError,
        "line 2 (text differs from column 5)",
        id="what-is-left-of-old-is-not-already-applied",
    ),
    pytest.param(
        "a()\nb()\n",
        "a()\nb()",
        "a()\n# ... rest unchanged ...",
        InvalidEditError,
        "where old_string has 1 line. new_string is written as it is, so that line",
        id="placeholder-in-new-for-one-line-would-delete-it",
    ),
    pytest.param(
        FETCH,
        FETCH,
        "def fetch(self):\n    # ... existing code ...\n    return rows[:10]\n",
        InvalidEditError,
        "placeholder line '# ... existing code ...' where old_string has 4 lines",
        id="placeholder-in-new-would-delete-lines",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "error", "says"), REFUSALS)
def test_fuzzy_replace_adversarial_edit_is_refused(content, old, new, error, says):
    with pytest.raises(MatchError) as caught:
        fuzzy_replace(content, old, new)

    assert type(caught.value) is error
    assert says in str(caught.value)


def test_already_applied_still_reported_when_new_has_text_old_lacks():
    with pytest.raises(InvalidEditError, match="already applied"):
        fuzzy_replace("a = 1\nb = 20\n", "a = 1\nb = 2\n", "a = 1\nb = 20\n")


def test_already_applied_still_reported_for_a_deletion_between_kept_lines():
    with pytest.raises(InvalidEditError, match="already applied"):
        fuzzy_replace("a()\nc()\n", "a()\nb()\nc()\n", "a()\nc()\n")


def test_stale_line_kept_and_moved_is_written_as_the_file_has_it():
    stale = FETCH.replace("len(rows)", "len(data)")
    moved = stale.replace("    count = len(data)\n", "").replace(
        "    data = ", "    count = len(data)\n    data = "
    )

    with pytest.raises(NoMatchError, match=STALE):
        fuzzy_replace(FETCH, stale, moved)


def test_replacement_end_line_counts_a_matched_blank_last_line():
    replacement = fuzzy_replace("x\n\t\tcall()\n\nend()\n", "  call()\n  ", "  call(1)")

    assert replacement.content == "x\n\t\tcall(1)\nend()\n"
    assert (replacement.start_line, replacement.end_line) == (2, 3)


def test_ambiguous_message_counts_places_in_one_line_once():
    with pytest.raises(AmbiguousMatchError) as caught:
        fuzzy_replace("ab = b + c\n", "b", "d")

    assert caught.value.lines == [1, 1]
    assert "starting at lines 1 (2 places in that line)." in str(caught.value)


def test_no_match_message_names_indentation_and_text_differences_together():
    with pytest.raises(NoMatchError) as caught:
        fuzzy_replace("\tif a:\n\t\tb = 1\n", "if a:\n    b = 2", "if a:\n    b = 3")

    assert "line 2 (indentation differs, and the text differs from character 5 after it)" in (
        str(caught.value)
    )


# Property tests. Lines come from a small vocabulary so that searches recur, fuzzy strategies
# find near misses, and every kind of whitespace, quote and escape turns up.

_WORDS = ["x", "y", "foo", "bar", "return", "if", "load", "=", "+", "(", ")", ":", "1", "'s'"]
_WORDS += ['"t"', "\\n", "#", "..."]
_INDENTS = ["", "", "    ", "        ", "\t", "\t\t", "  ", "\t    "]


def _random_line(rng: random.Random) -> str:
    if rng.random() < 0.12:
        return ""
    body = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 5)))
    return rng.choice(_INDENTS) + body + rng.choice(["", "", "", " ", "\t"])


def _random_file(rng: random.Random) -> str:
    pool = [_random_line(rng) for _ in range(rng.randint(3, 12))]
    count = rng.randint(1, 30)
    lines = [rng.choice(pool) if rng.random() < 0.3 else _random_line(rng) for _ in range(count)]
    eol = rng.choice(["\n", "\n", "\r\n"])
    text = eol.join(lines) + (eol if rng.random() < 0.7 else "")
    return ("\ufeff" if rng.random() < 0.1 else "") + text


def _misquote(rng: random.Random, line: str) -> str:
    """The line as a model might copy it: spacing, indentation, quotes or a character off."""
    kind = rng.randint(0, 6)
    if kind == 0:
        return line.rstrip()
    if kind == 1:
        return line.strip()
    if kind == 2:
        return "  " + line
    if kind == 3:
        return line.replace(" ", "  ", 1)
    if kind == 4:
        return line.replace("'", "\u2019").replace('"', "\u201c")
    if kind == 5 and len(line) > 3:
        column = rng.randrange(len(line))
        return line[:column] + "k" + line[column + 1 :]
    return line


def _rewrite(rng: random.Random, old: str) -> str:
    """A new_string that deletes, changes, repeats and adds lines of ``old``."""
    new: list[str] = []
    for line in old.split("\n"):
        roll = rng.random()
        if roll < 0.15:
            continue
        new.append(line.replace("x", "Q") + " #new" if roll < 0.35 else line)
        if 0.35 <= roll < 0.4:
            new.append(line)
        if rng.random() < 0.1:
            new.append("    added()")
    return "\n".join(new)


def _plain(content: str) -> str:
    return content.removeprefix("\ufeff").replace("\r\n", "\n")


def _lines(text: str) -> list[str]:
    return text.split("\n")


@pytest.mark.parametrize("seed", range(0, 1500, 150))
def test_exact_unique_search_edits_like_str_replace(seed):
    for case in range(seed, seed + 150):
        rng = random.Random(case)
        content = _random_file(rng)
        text = _plain(content)
        if not text.strip():
            continue
        start = rng.randrange(len(text))
        old = text[start : start + rng.randint(1, 40)]
        new = _rewrite(rng, old)
        if text.count(old) != 1 or not old.strip() or old == new:
            continue
        try:
            replacement = fuzzy_replace(content, old, new)
        except MatchError:
            continue
        expected = text.replace(old, new)
        # The file's final newline (or its absence) is kept over what str.replace would give.
        expected = expected.rstrip("\n") + ("\n" if text.endswith("\n") and expected else "")
        got = _plain(replacement.content)
        assert replacement.strategy == "exact", case
        assert got == expected or got.rstrip("\n") == expected.rstrip("\n"), case


@pytest.mark.parametrize("seed", range(0, 3000, 300))
def test_fuzzy_edit_stays_in_its_region_and_writes_only_verified_lines(seed):
    for case in range(seed, seed + 300):
        rng = random.Random(case)
        content = _random_file(rng)
        lines = _lines(_plain(content))
        start = rng.randrange(len(lines))
        block = lines[start : start + rng.randint(1, 6)]
        quoted = [_misquote(rng, line) if rng.random() < 0.4 else line for line in block]
        old = "\n".join(quoted) + ("\n" if rng.random() < 0.5 else "")
        new = _rewrite(rng, old)
        try:
            replacement = fuzzy_replace(content, old, new)
        except MatchError:
            continue
        if replacement.strategy == "exact":
            continue
        _assert_confined(lines, _lines(_plain(replacement.content)), replacement, old, new, case)


def _assert_confined(before, after, replacement, old, new, case):
    above = replacement.start_line - 1
    below = len(before) - replacement.end_line
    assert after[:above] == before[:above], case
    assert after[len(after) - below :] == before[len(before) - below :], case
    region = after[above : len(after) - below]
    matched = before[above : replacement.end_line]
    old_keys = {key_fold(line) for line in _lines(old)}
    file_keys = {key_fold(line) for line in matched}
    new_keys = {key_fold(line) for line in _lines(new)}
    for line in region:
        key = key_fold(line)
        # Every line written is the file's own or one new_string adds, never a stale copy.
        assert key in file_keys or key in new_keys, case
        assert not key or key in file_keys or key not in old_keys, case
    removed = Counter(map(key_fold, matched)) - Counter(map(key_fold, region))
    assert all(key in old_keys for key in removed), case
    assert len(region) <= len(matched) + len(_lines(new)), case


@pytest.mark.parametrize("seed", range(5))
def test_refused_patch_leaves_bytes_and_mtime_unchanged(tmp_path, seed):
    rng = random.Random(seed)
    refused = 0
    for case in range(40):
        content = _random_file(rng)
        path = tmp_path / f"case{case}.txt"
        path.write_bytes(content.encode())
        os.utime(path, ns=(10**18, 10**18))
        lines = _lines(_plain(content))
        start = rng.randrange(len(lines))
        old = "\n".join(_misquote(rng, line) for line in lines[start : start + 3]) + "zz"
        try:
            patch_file(path, old, _rewrite(rng, old))
        except MatchError:
            refused += 1
            assert path.read_bytes() == content.encode(), case
            assert os.stat(path).st_mtime_ns == 10**18, case
    assert refused >= 20
