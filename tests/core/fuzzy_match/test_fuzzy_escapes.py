r"""Escapes in what the model sends: written as the characters it meant, or refused, never as text.

A model that escapes ``new_string`` once too often writes ``\t`` where the file has a tab; one
that flattens it writes ``\n`` where the file has line breaks. Template literals get ``\$``.
"""

from __future__ import annotations

import pytest

from neta.fuzzy_match import InvalidEditError, fuzzy_replace

HELLO = 'def hello():\n\tprint("before")\n'

# id, content, old, new, expected content
DECODED = [
    pytest.param(
        HELLO,
        '\tprint("before")',
        '\\tprint("after")',
        'def hello():\n\tprint("after")\n',
        id="literal-tab-where-old-has-a-real-tab-exact",
    ),
    pytest.param(
        HELLO,
        '\tprint("before")  ',
        '\\tprint("after")  ',
        'def hello():\n\tprint("after")\n',
        id="literal-tab-where-old-has-a-real-tab-line-trimmed",
    ),
    pytest.param(
        "int\tx;\nint\ty;\n",
        "int\tx;",
        "int\\tz;",
        "int\tz;\nint\ty;\n",
        id="literal-tab-between-tokens-where-old-has-a-real-tab",
    ),
    pytest.param(
        "def f():\n    return 1\n",
        "def f():\n    return 1",
        "def f():\\n    return 2",
        "def f():\n    return 2\n",
        id="flattened-new-over-real-line-breaks-is-decoded",
    ),
    pytest.param(
        "def f():\r\n    return 1\r\n",
        "def f():\n    return 1",
        "def f():\\r\\n    return 2",
        "def f():\r\n    return 2\r\n",
        id="flattened-new-with-crlf-escapes-is-decoded",
    ),
    pytest.param(
        "\tx = 1\n",
        "\tx = 1",
        '\\tx = "a\\tb"',
        '\tx = "a\\tb"\n',
        id="only-the-escape-standing-for-the-real-tab-is-decoded",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "expected"), DECODED)
def test_fuzzy_replace_escapes_standing_for_real_characters_are_decoded(
    content, old, new, expected
):
    assert fuzzy_replace(content, old, new).content == expected


# id, content, old, new, expected content
KEPT = [
    pytest.param(
        'print("a\\tb")\n',
        'print("a\\tb")',
        'print("a\\tc")',
        'print("a\\tc")\n',
        id="file-holds-literal-tab-escapes",
    ),
    pytest.param(
        '\tprint("a\\tb")\n',
        '\tprint("a\\tb")',
        '\tprint("a\\tb\\tc")',
        '\tprint("a\\tb\\tc")\n',
        id="file-holds-both-real-tab-and-literal-escape",
    ),
    pytest.param(
        'x = 1\nprint("hi")\n',
        'print("hi")',
        'print("hi\\n")',
        'x = 1\nprint("hi\\n")\n',
        id="escape-added-inside-a-string-of-one-line",
    ),
    pytest.param(
        'a = 1\nprint("hi")\n',
        'a = 1\nprint("hi")',
        'a = 1\nprint("hi\\n")',
        'a = 1\nprint("hi\\n")\n',
        id="escape-added-inside-a-string-with-real-line-breaks",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "expected"), KEPT)
def test_fuzzy_replace_escapes_meant_as_text_are_kept(content, old, new, expected):
    assert fuzzy_replace(content, old, new).content == expected


def test_fuzzy_replace_one_line_new_of_escapes_over_unrelated_lines_is_refused():
    content = 'print("a")\nprint("b")\n'

    with pytest.raises(InvalidEditError) as caught:
        fuzzy_replace(content, 'print("a")\nprint("b")', 'print("a\\nb")')

    message = str(caught.value)
    assert "literal \\n" in message
    assert "The file was not changed" in message


# id, content, old, new, expected content
TEMPLATES = [
    pytest.param(
        "const s = `Hello ${name}`;\n",
        "`Hello \\${name}`",
        "`Bye \\${name}`",
        "const s = `Bye ${name}`;\n",
        id="escaped-dollar",
    ),
    pytest.param(
        "const s = `Hello ${name}`;\n",
        "\\`Hello ${name}\\`",
        "\\`Bye ${name}\\`",
        "const s = `Bye ${name}`;\n",
        id="escaped-backticks",
    ),
    pytest.param(
        "const s = `Hello ${name}`;\nlog(s);\n",
        "const s = \\`Hello \\${name}\\`;\\nlog(s);",
        "const s = \\`Hi \\${name}\\`;\\nlog(s);",
        "const s = `Hi ${name}`;\nlog(s);\n",
        id="escaped-template-over-two-lines",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "expected"), TEMPLATES)
def test_fuzzy_replace_template_escapes_are_decoded_in_old_and_new(content, old, new, expected):
    replacement = fuzzy_replace(content, old, new)

    assert replacement.content == expected
    assert replacement.strategy == "escape_normalized"


def test_fuzzy_replace_new_that_decodes_to_old_changes_nothing_and_is_refused():
    with pytest.raises(InvalidEditError, match="change nothing"):
        fuzzy_replace(HELLO, '\tprint("before")', '\\tprint("before")')
