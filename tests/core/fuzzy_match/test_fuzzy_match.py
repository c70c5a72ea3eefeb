"""The fuzzy matcher's corpus: every case asserts the exact new content or the exact error."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

import neta.errors
from neta import fuzzy_match
from neta.fuzzy_match import (
    STRATEGIES,
    AmbiguousMatchError,
    FuzzyMatch,
    InvalidEditError,
    MatchError,
    NoMatchError,
    Replacement,
    fuzzy_find_all,
    fuzzy_replace,
)

TOTAL = (
    "def total(items):\n"
    "    result = 0\n"
    "    for item in items:\n"
    "        result += item.price\n"
    "    return result\n"
)

LOAD = (
    "def load(path):\n"
    "    with open(path) as handle:\n"
    "        data = handle.read()\n"
    "    return parse(data)\n"
)

# Two blocks that differ in one line: a search that differs from both in that line resembles
# both alike. (They share text with the search, not just "try:" and "pass", which a similarity
# match may not rely on.)
JOBS = (
    "try:\n    run_job(1)\nexcept JobError as error:\n    log_failure(error)\n"
    "try:\n    run_job(2)\nexcept JobError as error:\n    log_failure(error)\n"
)
JOB_3 = "try:\n    run_job(3)\nexcept JobError as error:\n    log_failure(error)"

PIPELINES = (
    "def first():\n"
    "    value = load()\n"
    "    value = clean(value)\n"
    "    save(value)\n"
    "def second():\n"
    "    value = load()\n"
    "    value = clean(value)\n"
    "    save(value)\n"
)

# id, content, old, new, expected content, expected strategy
MATCHES = [
    pytest.param(
        "x = compute(a, b)\n",
        "compute(a, b)",
        "compute(b, a)",
        "x = compute(b, a)\n",
        "exact",
        id="exact-inside-a-line",
    ),
    pytest.param(
        "def f():\n    return 1\n\nprint(f())\n",
        "    return 1\n",
        "    return 2\n",
        "def f():\n    return 2\n\nprint(f())\n",
        "exact",
        id="exact-whole-line-with-newline",
    ),
    pytest.param("a\nb\nc\n", "b\n", "", "a\nc\n", "exact", id="exact-deletes-a-line"),
    pytest.param(
        "foo()\n  foo()\n",
        "  foo()",
        "  bar()",
        "foo()\n  bar()\n",
        "exact",
        id="exact-decides-before-looser-strategies-see-two",
    ),
    pytest.param(
        "def f():   \n    return 1\n",
        "def f():\n    return 1",
        "def g():\n    return 1",
        "def g():\n    return 1\n",
        "line_trimmed",
        id="line-trimmed-trailing-spaces-in-file",
    ),
    pytest.param(
        "a = 1  \nb = 2\nc = 3\n",
        "a = 1\nb = 2",
        "a = 1\nb = 20",
        "a = 1  \nb = 20\nc = 3\n",
        "line_trimmed",
        id="line-trimmed-kept-line-keeps-file-text",
    ),
    pytest.param(
        "x  =  1\ny = 2\n",
        "x = 1\ny = 2",
        "x = 1\ny = 3",
        "x  =  1\ny = 3\n",
        "whitespace_normalized",
        id="whitespace-normalized-inner-spacing",
    ),
    pytest.param(
        "int\tx;\nint\ty;\n",
        "int x;\nint y;",
        "int x;\nlong y;",
        "int\tx;\nlong y;\n",
        "whitespace_normalized",
        id="whitespace-normalized-tab-inside-line",
    ),
    pytest.param(
        "x\u00a0= 1\ny = 2\n",
        "x = 1\ny = 2",
        "x = 1\ny = 3",
        "x\u00a0= 1\ny = 3\n",
        "whitespace_normalized",
        id="whitespace-normalized-nbsp-in-file",
    ),
    pytest.param(
        "class A:\n    def f(self):\n        return 1\n",
        "def f(self):\n    return 1",
        "def f(self):\n    x = 1\n    return x",
        "class A:\n    def f(self):\n        x = 1\n        return x\n",
        "indent_flexible",
        id="indent-flexible-reindents-added-lines",
    ),
    pytest.param(
        "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n",
        "if x {\n    return 1\n}",
        "if x {\n    log()\n    return 1\n}",
        "func f() {\n\tif x {\n\t\tlog()\n\t\treturn 1\n\t}\n}\n",
        "indent_flexible",
        id="indent-flexible-tabs-stay-tabs",
    ),
    pytest.param(
        "if a:\n        if b:\n            go()\n",
        "if b:\n    go()",
        "if b:\n    go()\nelse:\n    stop()",
        "if a:\n        if b:\n            go()\n        else:\n            stop()\n",
        "indent_flexible",
        id="indent-flexible-keeps-relative-nesting",
    ),
    pytest.param(
        "def f():\n    return 1\n",
        "def f():\\n    return 1",
        "def f():\\n    return 2",
        "def f():\n    return 2\n",
        "escape_normalized",
        id="escape-normalized-literal-backslash-n",
    ),
    pytest.param(
        'print("hi")\n',
        'print(\\"hi\\")',
        'print(\\"bye\\")',
        'print("bye")\n',
        "escape_normalized",
        id="escape-normalized-escaped-quotes",
    ),
    pytest.param(
        "a\tb\n", "a\\tb", "a\\tc", "a\tc\n", "escape_normalized", id="escape-normalized-tab"
    ),
    pytest.param(
        "if ready: start(now)\n",
        "  start(now)  ",
        "  stop(now)  ",
        "if ready: stop(now)\n",
        "trimmed_boundary",
        id="trimmed-boundary-padded-fragment",
    ),
    pytest.param(
        "a = 1\n    b = 2\nc = 3\n",
        "\n\nb = 2\n\n",
        "\n\nb = 3\n\n",
        "a = 1\n    b = 3\nc = 3\n",
        "trimmed_boundary",
        id="trimmed-boundary-blank-lines-around-fragment",
    ),
    pytest.param(
        "if x:\n        y = 1\n        z = 2\n",
        "\n    y = 1\n    z = 2\n\n",
        "\n    y = 1\n    z = 3\n\n",
        "if x:\n        y = 1\n        z = 3\n",
        "trimmed_boundary",
        id="trimmed-boundary-blank-lines-around-block",
    ),
    pytest.param(
        'msg = "it\'s done"\nprint(msg)\n',
        "msg = \u201cit\u2019s done\u201d\nprint(msg)",
        "msg = \u201cit\u2019s over\u201d\nprint(msg)",
        'msg = "it\'s over"\nprint(msg)\n',
        "unicode_normalized",
        id="unicode-normalized-smart-quotes-typed-by-model",
    ),
    pytest.param(
        "# Setup \u2014 step one\nrun()\n",
        "# Setup - step one\nrun()",
        "# Setup - step one\nrun(fast=True)",
        "# Setup \u2014 step one\nrun(fast=True)\n",
        "unicode_normalized",
        id="unicode-normalized-em-dash-in-file-kept",
    ),
    pytest.param(
        "print('Loading\u2026')\ndone()\n",
        "print('Loading...')\ndone()",
        "print('Loading...')\ndone(1)",
        "print('Loading\u2026')\ndone(1)\n",
        "unicode_normalized",
        id="unicode-normalized-ellipsis-in-file-kept",
    ),
    pytest.param(
        TOTAL,
        TOTAL.replace("item.price", "item.cost"),
        TOTAL.replace("item.price", "item.cost").replace(
            "return result", "return round(result, 2)"
        ),
        TOTAL.replace("return result", "return round(result, 2)"),
        "block_anchor",
        id="block-anchor-stale-middle-line-kept-from-file",
    ),
    pytest.param(
        TOTAL,
        "def total(items):\n    result = 0\n    for entry in items:\n"
        "        result += entry.price\n    return result\n",
        "def total(items):\n    result = 0\n    for entry in items:\n"
        "        result += entry.price\n    return result\n\n\nTAX = 0.2\n",
        TOTAL + "\n\nTAX = 0.2\n",
        "block_anchor",
        id="block-anchor-appends-after-block",
    ),
    pytest.param(
        LOAD,
        LOAD.replace("load(path)", "load(filename)"),
        LOAD.replace("load(path)", "load(filename)").replace(
            "parse(data)", "parse(data, strict=True)"
        ),
        LOAD.replace("parse(data)", "parse(data, strict=True)"),
        "context_aware",
        id="context-aware-stale-first-line-kept-from-file",
    ),
    pytest.param(
        'const config = {\n  ...defaults,\n  port: 8080,\n  host: "localhost",\n};\n',
        'const config = {\n  ...defaults,\n  port: 8080,\n  host: "127.0.0.1",\n};',
        'const config = {\n  ...defaults,\n  port: 9090,\n  host: "127.0.0.1",\n};',
        'const config = {\n  ...defaults,\n  port: 9090,\n  host: "localhost",\n};\n',
        "block_anchor",
        id="block-anchor-js-spread-is-not-a-placeholder",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "expected", "strategy"), MATCHES)
def test_fuzzy_replace_corpus_match_writes_expected_content(content, old, new, expected, strategy):
    replacement = fuzzy_replace(content, old, new)

    assert replacement.content == expected
    assert replacement.strategy == strategy
    assert replacement.count == 1


def test_corpus_matches_cover_every_strategy():
    covered = {param.values[4] for param in MATCHES}

    assert covered == set(STRATEGIES)


# content, old, replace_all, start lines, strategy
AMBIGUITIES = [
    pytest.param("a = 1\nb = 2\na = 1\n", "a = 1", False, [1, 3], "exact", id="exact-twice"),
    pytest.param("x\nx\nx", "x\nx", False, [1, 2], "exact", id="exact-overlapping"),
    pytest.param(
        "x = 1  \ny = 2\nx = 1 \ny = 2\n",
        "x = 1\ny = 2",
        False,
        [1, 3],
        "line_trimmed",
        id="line-trimmed-twice",
    ),
    pytest.param(
        "x \nx \nx \n", "x\nx", False, [1, 2], "line_trimmed", id="line-trimmed-overlapping"
    ),
    pytest.param(
        "x  = 1\nx =  1\n", "x = 1", False, [1, 2], "whitespace_normalized", id="ws-twice"
    ),
    pytest.param(
        "def f():\n    return 1\nclass C:\n    def f():\n        return 1\n",
        "def f():\n  return 1",
        False,
        [1, 4],
        "indent_flexible",
        id="indent-flexible-twice",
    ),
    pytest.param(
        "call(a)\ncall(a)\n", "call(a)\\n", False, [1, 2], "escape_normalized", id="escape-twice"
    ),
    pytest.param(
        "x = foo(1) + foo(1)\n",
        "  foo(1) ",
        False,
        [1, 1],
        "trimmed_boundary",
        id="trimmed-boundary-twice-in-one-line",
    ),
    pytest.param(
        "a = \u201cx\u201d\nb\na = \u201cx\u201d\nb\n",
        'a = "x"\nb',
        False,
        [1, 3],
        "unicode_normalized",
        id="unicode-normalized-twice",
    ),
    pytest.param(
        JOBS,
        JOB_3,
        False,
        [1, 5],
        "block_anchor",
        id="block-anchor-two-candidates",
    ),
    pytest.param(
        JOBS,
        JOB_3,
        True,
        [1, 5],
        "block_anchor",
        id="block-anchor-two-candidates-even-with-replace-all",
    ),
    pytest.param(
        PIPELINES,
        "def third():\n    value = load()\n    value = clean(value)\n    save(value)",
        False,
        [1, 5],
        "context_aware",
        id="context-aware-two-candidates",
    ),
    pytest.param(
        PIPELINES,
        "def third():\n    value = load()\n    value = clean(value)\n    save(value)",
        True,
        [1, 5],
        "context_aware",
        id="context-aware-two-candidates-even-with-replace-all",
    ),
]


@pytest.mark.parametrize(("content", "old", "replace_all", "lines", "strategy"), AMBIGUITIES)
def test_fuzzy_replace_corpus_ambiguity_is_refused(content, old, replace_all, lines, strategy):
    with pytest.raises(AmbiguousMatchError) as caught:
        fuzzy_replace(content, old, "REPLACED", replace_all=replace_all)

    assert caught.value.lines == lines
    assert caught.value.strategy == strategy


def test_fuzzy_replace_ambiguous_exact_does_not_fall_through_to_unique_looser_match():
    content = "go()\n    go()  \nstop()\n"

    with pytest.raises(AmbiguousMatchError) as caught:
        fuzzy_replace(content, "go()", "run()")

    assert caught.value.strategy == "exact"


NOT_FOUND = "was not found in the file"
STALE = "matched only approximately"
ELIDED = "placeholder line"

# content, old, new, error type, what the message says
REFUSALS = [
    pytest.param(
        "port = 8080\n", "port = 9090", "port = 7070", NoMatchError, NOT_FOUND, id="one-line"
    ),
    pytest.param(
        "host = 'a'\nport = 8080\n",
        "host = 'a'\nport = 9090",
        "host = 'b'\nport = 9090",
        NoMatchError,
        NOT_FOUND,
        id="two-lines-never-fuzzy",
    ),
    pytest.param(
        "foobar = 1\n", "  foo  ", "  baz  ", NoMatchError, "longer word", id="trim-in-identifier"
    ),
    pytest.param(
        "x = foobar\n", "foo\n", "bar\n", NoMatchError, NOT_FOUND, id="prefix-of-identifier"
    ),
    pytest.param(
        "return value\n", "returnvalue", "return 0", NoMatchError, NOT_FOUND, id="words-not-joined"
    ),
    pytest.param(
        "returnvalue\n", "return  value", "return 0", NoMatchError, NOT_FOUND, id="words-not-split"
    ),
    pytest.param(
        "a = 1\nb = 2\n",
        "a = 1 b = 2",
        "a = 2 b = 3",
        NoMatchError,
        NOT_FOUND,
        id="newlines-not-collapsed",
    ),
    pytest.param(
        "print('hello world')\n",
        "print('helo world')",
        "print('hi')",
        NoMatchError,
        NOT_FOUND,
        id="one-line-typo",
    ),
    pytest.param(
        TOTAL,
        'def total(items):\n    raise NotImplementedError("todo")\n    return result',
        "def total(items):\n    return 0",
        NoMatchError,
        NOT_FOUND,
        id="block-of-other-line-count",
    ),
    pytest.param(
        TOTAL,
        TOTAL.replace("item.price", "item.cost"),
        TOTAL.replace("item.price", "item.cost * 2"),
        NoMatchError,
        STALE,
        id="block-anchor-stale-line-the-edit-changes",
    ),
    pytest.param(
        LOAD,
        LOAD.replace("load(path)", "load(filename)"),
        LOAD.replace("load(path)", "load(filename, mode)"),
        NoMatchError,
        STALE,
        id="context-aware-stale-line-the-edit-changes",
    ),
    pytest.param(
        LOAD,
        LOAD.replace("load(path)", "load(filename)"),
        LOAD.replace("def load(path):\n", ""),
        NoMatchError,
        STALE,
        id="context-aware-line-it-removes-differs",
    ),
    pytest.param(
        TOTAL,
        "def total(items):\n    total = 1\n    while items:\n        items.pop()\n"
        "    return result\n",
        "def total(items):\n    return 0\n",
        NoMatchError,
        NOT_FOUND,
        id="block-anchor-middle-below-60-percent",
    ),
    pytest.param(
        LOAD,
        "def fetch(url):\n    with open(path) as handle:\n        chunks = list(handle)\n"
        "    return decode(chunks)\n",
        "def fetch(url):\n    return None\n",
        NoMatchError,
        NOT_FOUND,
        id="context-aware-below-half-the-lines",
    ),
    pytest.param(
        TOTAL,
        TOTAL.replace("    result = 0\n", "    # ... existing code ...\n"),
        TOTAL.replace("    result = 0\n", "    # ... existing code ...\n").replace(
            "return result", "return result * 2"
        ),
        InvalidEditError,
        ELIDED,
        id="elision-comment-placeholder",
    ),
    pytest.param(
        TOTAL,
        TOTAL.replace("    result = 0\n", "    ...\n"),
        TOTAL.replace("    result = 0\n", "    ...\n").replace("return result", "return -1"),
        InvalidEditError,
        ELIDED,
        id="elision-dots-placeholder",
    ),
    pytest.param(
        "function f() {\n  a();\n  b();\n  c();\n}\n",
        "function f() {\n  a();\n  // ...\n  c();\n}",
        "function f() {\n  a();\n  // ...\n  d();\n}",
        InvalidEditError,
        ELIDED,
        id="elision-slash-comment-placeholder",
    ),
    pytest.param(
        "x = 2\n", "x = 1", "x = 2", InvalidEditError, "already applied", id="already-applied"
    ),
    pytest.param("a\n", "", "b", InvalidEditError, "empty", id="empty-old"),
    pytest.param("a\n \n", "  \n\t", "b", InvalidEditError, "only whitespace", id="blank-old"),
    pytest.param("a\n", "a", "a", InvalidEditError, "identical", id="old-equals-new"),
    pytest.param(
        "a\r\n", "a\r\n", "a\n", InvalidEditError, "identical", id="old-equals-new-but-crlf"
    ),
    pytest.param(
        "x = 1\ny = 2\nz\n",
        "x = 1 \ny = 2",
        "x = 1\ny = 2",
        InvalidEditError,
        "change nothing",
        id="no-op-edit",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "error", "says"), REFUSALS)
def test_fuzzy_replace_corpus_refusal_raises_exact_error(content, old, new, error, says):
    with pytest.raises(MatchError) as caught:
        fuzzy_replace(content, old, new)

    assert type(caught.value) is error
    assert says in str(caught.value)


# content, old, new, expected content
ENCODINGS = [
    pytest.param(
        "a\r\nb\r\nc\r\n", "b\n", "B\nB2\n", "a\r\nB\r\nB2\r\nc\r\n", id="crlf-inserted-lines"
    ),
    pytest.param("a\r\nb\r\n", "a\r\nb", "x\r\ny", "x\r\ny\r\n", id="crlf-search-with-crlf"),
    pytest.param(
        "def f():  \r\n    return 1\r\n",
        "def f():\n    return 1",
        "def f():\n    return 2",
        "def f():  \r\n    return 2\r\n",
        id="crlf-line-trimmed",
    ),
    pytest.param(
        "\tif x:\r\n\t\treturn 1\r\n",
        "if x:\n    return 1",
        "if x:\n    log()\n    return 1",
        "\tif x:\r\n\t\tlog()\r\n\t\treturn 1\r\n",
        id="crlf-tabs-reindented",
    ),
    pytest.param(
        "a\r\nb\nc\r\nd\n", "c", "C1\nC2", "a\r\nb\nC1\r\nC2\r\nd\n", id="mixed-crlf-region"
    ),
    pytest.param("a\r\nb\nc\r\nd\n", "b", "b\nb2", "a\r\nb\nb2\nc\r\nd\n", id="mixed-lf-region"),
    pytest.param(
        "a\r\nb\nc\r\nd\n",
        "a\nb\nc",
        "a\nB\nc",
        "a\r\nB\r\nc\r\nd\n",
        id="mixed-region-takes-first-line-ending",
    ),
    pytest.param("\ufeffx = 1\n", "x = 1", "x = 2", "\ufeffx = 2\n", id="bom-kept"),
    pytest.param("\ufeffa\r\nb\r\n", "a\nb", "a\nc", "\ufeffa\r\nc\r\n", id="bom-and-crlf"),
    pytest.param(
        "\ufeffx = 1\n", "\ufeffx = 1", "\ufeffx = 2", "\ufeffx = 2\n", id="bom-copied-into-old"
    ),
    pytest.param(
        "\ufeff  a = 1\n  b = 2\n",
        "a = 1\nb = 2",
        "a = 1\nb = 3",
        "\ufeff  a = 1\n  b = 3\n",
        id="bom-line-strategy",
    ),
    pytest.param("a\nb", "b", "c", "a\nc", id="no-final-newline-kept"),
    pytest.param("a\nb", "b\n", "c\n", "a\nc", id="no-final-newline-search-with-newline"),
    pytest.param("a\nb\n", "b\n", "c", "a\nc\n", id="final-newline-kept"),
    pytest.param(
        "a\nb", "b", "c\n\n", "a\nc\n\n", id="no-final-newline-new-ends-in-blanks-as-new-says"
    ),
    pytest.param("a\r\nb", "b", "b\nc", "a\r\nb\r\nc", id="crlf-without-final-newline"),
    pytest.param("a\r\n\r\nb\r\n", "a\n\nb", "a\nb", "a\r\nb\r\n", id="crlf-blank-line-removed"),
    pytest.param(
        "\tif x:\n\t\treturn 1\n",
        "\t\treturn 1",
        "\t\treturn 2",
        "\tif x:\n\t\treturn 2\n",
        id="tabs-exact",
    ),
    pytest.param(
        "\tif x:\n\t\treturn 1\n",
        "if x:\n    return 1",
        "if x:\n    return 2",
        "\tif x:\n\t\treturn 2\n",
        id="tabs-in-file-spaces-in-search",
    ),
    pytest.param(
        "    if x:\n        return 1\n",
        "\tif x:\n\t\treturn 1",
        "\tif x:\n\t\treturn 1\n\t\t# done",
        "    if x:\n        return 1\n        # done\n",
        id="spaces-in-file-tabs-in-search",
    ),
    pytest.param(
        "caf\u00e9 = 1\nna\u00efve = 2\n",
        "na\u00efve = 2",
        "na\u00efve = 3",
        "caf\u00e9 = 1\nna\u00efve = 3\n",
        id="non-ascii-exact",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "expected"), ENCODINGS)
def test_fuzzy_replace_corpus_encoding_is_kept(content, old, new, expected):
    assert fuzzy_replace(content, old, new).content == expected


# content, old, new, replace_all, expected content, expected count
SAFETY = [
    pytest.param("x = 1\n", "x = 1", r"x = \1 $& \g<0>", False, "x = \\1 $& \\g<0>\n", 1, id="re"),
    pytest.param(
        "  a = 1\n  b = 2\n",
        "a = 1\nb = 2",
        "a = '\\d+'\nb = 2",
        False,
        "  a = '\\d+'\n  b = 2\n",
        1,
        id="regex-text-in-line-strategy",
    ),
    pytest.param("a\na\n", "a", "aa", True, "aa\naa\n", 2, id="replace-all-no-rematch"),
    pytest.param(
        "foo foo", "foo", "foo bar foo", True, "foo bar foo foo bar foo", 2, id="new-contains-old"
    ),
    pytest.param("x\nx\nx", "x\nx", "y", True, "y\nx", 1, id="replace-all-overlap-left-first"),
    pytest.param(
        "a = 1   \nb = 2\na = 1 \nb = 2\n",
        "a = 1\nb = 2",
        "a = 1\nb = 3",
        True,
        "a = 1   \nb = 3\na = 1 \nb = 3\n",
        2,
        id="replace-all-line-strategy-keeps-each-file-line",
    ),
    pytest.param(
        "a = 1\nb = 2\n",
        "a = 1\\nb = 2",
        "a = 1\\nb = 3",
        False,
        "a = 1\nb = 3\n",
        1,
        id="escape-never-writes-literal-backslash-n",
    ),
    pytest.param(
        "s = 'a\\nb'\n",
        "s = 'a\\nb'",
        "s = 'a\\nc'",
        False,
        "s = 'a\\nc'\n",
        1,
        id="real-backslash-n-in-file-stays-literal",
    ),
    pytest.param(
        "v = 1\nv = 1\n", "v = 1", "w = $1", True, "w = $1\nw = $1\n", 2, id="dollar-literal"
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "replace_all", "expected", "count"), SAFETY)
def test_fuzzy_replace_corpus_safety_writes_expected_content(
    content, old, new, replace_all, expected, count
):
    replacement = fuzzy_replace(content, old, new, replace_all=replace_all)

    assert replacement.content == expected
    assert replacement.count == count


def test_fuzzy_replace_stale_kept_line_is_never_written_back():
    stale = TOTAL.replace("item.price", "item.cost")

    replacement = fuzzy_replace(TOTAL, stale, stale.replace("result = 0", "result = 0.0"))

    assert "item.cost" not in replacement.content
    assert "result = 0.0" in replacement.content


def test_fuzzy_replace_line_range_is_in_the_original_content():
    content = "a\nb\nc\nd\n"

    replacement = fuzzy_replace(content, "b\nc\n", "B\n")

    assert (replacement.start_line, replacement.end_line) == (2, 3)


def test_fuzzy_replace_line_range_of_replace_all_is_the_first_region():
    replacement = fuzzy_replace("a\nx\na\n", "a", "b", replace_all=True)

    assert (replacement.count, replacement.start_line, replacement.end_line) == (2, 1, 1)


def test_fuzzy_find_all_overlapping_occurrences_counted():
    matches = fuzzy_find_all("x\nx\nx", "x\nx")

    assert matches == [
        FuzzyMatch("exact", 0, 3, "x\nx"),
        FuzzyMatch("exact", 2, 5, "x\nx"),
    ]


def test_fuzzy_find_all_offsets_point_into_content_with_bom_and_crlf():
    content = "\ufeffa\r\nb\r\nc\r\n"

    matches = fuzzy_find_all(content, "b\nc")

    assert matches == [FuzzyMatch("exact", 4, 8, "b\r\nc")]


def test_fuzzy_find_all_line_strategy_returns_whole_lines():
    matches = fuzzy_find_all("  a = 1\n  b = 2\n", "a = 1\nb = 2")

    assert matches == [FuzzyMatch("indent_flexible", 0, 15, "  a = 1\n  b = 2")]


def test_fuzzy_find_all_mixed_line_endings_offsets_point_into_content():
    content = "a\nb\r\n  c\nd\r\n"

    matches = fuzzy_find_all(content, "b\nc\nd\n")

    assert matches == [FuzzyMatch("indent_flexible", 2, 12, "b\r\n  c\nd\r\n")]


@pytest.mark.parametrize("search", ["", "  ", "\n\n"], ids=["empty", "spaces", "newlines"])
def test_fuzzy_find_all_blank_search_finds_nothing(search):
    assert fuzzy_find_all("a\n\nb\n", search) == []


def test_fuzzy_find_all_no_match_returns_empty_list():
    assert fuzzy_find_all("a\nb\n", "c") == []


def test_fuzzy_match_reexports_the_errors_of_neta_errors():
    assert fuzzy_match.MatchError is neta.errors.MatchError
    assert fuzzy_match.NoMatchError is neta.errors.NoMatchError
    assert fuzzy_match.AmbiguousMatchError is neta.errors.AmbiguousMatchError
    assert fuzzy_match.InvalidEditError is neta.errors.InvalidEditError


def _isort_key(name: str) -> tuple[int, str]:
    return (0 if name.isupper() else 1 if name[0].isupper() else 2), name


def test_fuzzy_match_all_is_sorted_and_complete():
    defined_here = {
        name
        for name, value in vars(fuzzy_match).items()
        if getattr(value, "__module__", None) == fuzzy_match.__name__ and not name.startswith("_")
    }
    errors = {"MatchError", "NoMatchError", "AmbiguousMatchError", "InvalidEditError"}

    assert fuzzy_match.__all__ == sorted(fuzzy_match.__all__, key=_isort_key)
    assert set(fuzzy_match.__all__) == defined_here | errors | {"STRATEGIES"}


def test_results_are_frozen():
    replacement = Replacement("a", 1, "exact", 1, 1)

    with pytest.raises(FrozenInstanceError):
        replacement.count = 2  # type: ignore[misc]


def test_fuzzy_find_all_fuzzy_block_spans_the_files_lines():
    stale = TOTAL.replace("item.price", "item.cost")

    matches = fuzzy_find_all(TOTAL, stale)

    assert matches == [FuzzyMatch("block_anchor", 0, len(TOTAL), TOTAL)]
