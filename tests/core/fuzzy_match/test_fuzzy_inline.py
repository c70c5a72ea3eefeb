"""Typography and spacing inside a line: matched, and the file's own characters kept.

A model retypes ``…`` as ``...``, ``—`` as ``--``, smart quotes as ASCII, and collapses the
spacing between tokens. Such a line still matches; where the edit leaves a part of the line
alone, that part keeps the file's typographic characters (Unicode spaces included), while
plain spaces and tabs are written as new_string has them, as for whole lines. Whitespace is
never made optional inside an identifier or a string.
"""

from __future__ import annotations

import pytest

from neta.fuzzy_match import NoMatchError, fuzzy_replace

# id, content, old, new, expected content
TYPOGRAPHY = [
    pytest.param(
        "Wait for it\u2026and done\n",
        "Wait for it...and done",
        "Wait for it...then done",
        "Wait for it\u2026then done\n",
        id="ellipsis",
    ),
    pytest.param(
        "x = a \u2212 b\ny = 1\n",
        "x = a - b\ny = 1",
        "x = a - c\ny = 1",
        "x = a \u2212 c\ny = 1\n",
        id="minus-sign",
    ),
    pytest.param(
        "# Setup \u2014 step one\nrun()\n",
        "# Setup - step one\nrun()",
        "# Setup - step two\nrun()",
        "# Setup \u2014 step two\nrun()\n",
        id="em-dash-typed-as-hyphen",
    ),
    pytest.param(
        "# Setup \u2014 step one\nrun()\n",
        "# Setup -- step one\nrun()",
        "# Setup -- step two\nrun()",
        "# Setup \u2014 step two\nrun()\n",
        id="em-dash-typed-as-two-hyphens",
    ),
    pytest.param(
        "say(\u201chello\u201d, \u2018x\u2019)\n",
        "say(\"hello\", 'x')",
        "say(\"hello\", 'y')",
        "say(\u201chello\u201d, \u2018y\u2019)\n",
        id="smart-quotes-in-the-file",
    ),
    pytest.param(
        "msg = \u201chello\u201d\n",
        '"hello"',
        '"bye"',
        "msg = \u201cbye\u201d\n",
        id="smart-quotes-in-the-file-against-ascii-inside-a-line",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "expected"), TYPOGRAPHY)
def test_fuzzy_replace_changed_line_keeps_the_files_typography(content, old, new, expected):
    replacement = fuzzy_replace(content, old, new)

    assert replacement.content == expected
    assert replacement.strategy == "unicode_normalized"


# id, content, old, new, expected content
SPACING = [
    pytest.param(
        "x\u00a0= 1\ny = 2\n",
        "x = 1\ny = 2",
        "x = 5\ny = 2",
        "x\u00a0= 5\ny = 2\n",
        id="nbsp",
    ),
    pytest.param(
        "\u540d\u524d\u3000= 1\n",
        "\u540d\u524d = 1",
        "\u540d\u524d = 2",
        "\u540d\u524d\u3000= 2\n",
        id="ideographic-space",
    ),
    pytest.param(
        "foo   bar baz\n",
        "foo bar",
        "foo qux",
        "foo qux baz\n",
        id="runs-of-spaces-between-words",
    ),
    pytest.param(
        "x\u2002=\u2002compute(a)\n",
        "x = compute(a)",
        "x = compute(b)",
        "x\u2002=\u2002compute(b)\n",
        id="en-spaces",
    ),
    pytest.param(
        "x = compute(a,  b)\n",
        "compute(a, b)",
        "compute(a, c)",
        "x = compute(a, c)\n",
        id="double-space-after-comma",
    ),
    pytest.param(
        "  def  x(  ):\n      pass\n",
        "def x():",
        "def y():",
        "  def y():\n      pass\n",
        id="spaces-between-tokens-the-model-left-out",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "expected"), SPACING)
def test_fuzzy_replace_whitespace_between_tokens_inside_a_line_matches(content, old, new, expected):
    replacement = fuzzy_replace(content, old, new)

    assert replacement.content == expected
    assert replacement.strategy == "whitespace_normalized"


# id, content, old
NEVER = [
    pytest.param("value = foo bar\n", "foob ar", id="inside-an-identifier"),
    pytest.param("value = foobar + 1\n", "foo bar", id="space-in-search-not-in-identifier"),
    pytest.param('say("a  b") + 1\n', 'say("a b")', id="inside-a-string"),
    pytest.param('say("a, b") + 1\n', 'say("a,b")', id="after-a-comma-inside-a-string"),
    pytest.param('x = " " + y\n', 'x = ""', id="between-two-quotes"),
    pytest.param("x = a == b\n", "x = a = = b", id="inside-an-operator"),
]


@pytest.mark.parametrize(("content", "old"), NEVER)
def test_fuzzy_replace_whitespace_is_never_optional_inside_a_token(content, old):
    with pytest.raises(NoMatchError):
        fuzzy_replace(content, old, "changed")
