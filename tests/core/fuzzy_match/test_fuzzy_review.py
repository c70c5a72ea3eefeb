r"""Edits an outside review found written wrong: now as the model sent them, or refused."""

from __future__ import annotations

import pytest

from neta.fuzzy_match import (
    AmbiguousMatchError,
    InvalidEditError,
    NoMatchError,
    fuzzy_replace,
)


def test_fuzzy_replace_escape_in_a_string_of_a_new_with_real_line_breaks_is_kept():
    # new has real line breaks, so its \n is text in a string, not a flattened line break,
    # even where it lines up with old's final line break.
    content = "def f(x):\n    return x\n\ny = 1\n"
    old = "def f(x):\n    return x\n"
    new = 'def f(x):\n    return x + "\\n"'
    expected = 'def f(x):\n    return x + "\\n"\ny = 1\n'  # as str.replace writes it
    assert fuzzy_replace(content, old, new).content == expected


def test_fuzzy_replace_escape_in_a_string_before_old_final_line_break_is_kept():
    content = "a = 1\nb = 2\nc = 3\n"
    expected = 'a = 1\nb = "2\\n"c = 3\n'
    assert fuzzy_replace(content, "a = 1\nb = 2\n", 'a = 1\nb = "2\\n"').content == expected


def test_fuzzy_replace_trimmed_search_garbled_trailing_spaces_are_not_written_back():
    # old's line ends in spaces the file's line lacks, and new's lines carry the same garbling:
    # the line the edit keeps must not gain them.
    content = "def f():\n    a()\n    b()\n"
    old = "    a()  \n  "
    new = "    a()  \n    x()  \n  "
    expected = "def f():\n    a()\n    x()\n    b()\n"
    assert fuzzy_replace(content, old, new).content == expected


IF_BLOCK = "def f():\n    if x:\n        a()\n    return 1\n"


def test_fuzzy_replace_trimmed_search_reindents_the_lines_new_adds():
    # old starts its line with 4 spaces where the file has 8: new's lines take the same shift,
    # and the line the edit keeps stays where the file has it.
    assert fuzzy_replace(IF_BLOCK, "\n    a()", "\n    b()\n    a()").content == (
        "def f():\n    if x:\n        b()\n        a()\n    return 1\n"
    )
    assert fuzzy_replace(IF_BLOCK, "\n    a()", "\n    a()\n    b()").content == (
        "def f():\n    if x:\n        a()\n        b()\n    return 1\n"
    )
    assert fuzzy_replace(IF_BLOCK, "\n    a()", "\n    if y:\n        a()").content == (
        "def f():\n    if x:\n        if y:\n            a()\n    return 1\n"
    )


def test_fuzzy_replace_trimmed_search_refuses_lines_its_shift_cannot_place():
    with pytest.raises(NoMatchError):
        fuzzy_replace(IF_BLOCK, "\n    a()", "\n    a()\nb()")
    # places at different depths: no one shift serves them all
    content = "if x:\n    a()\nif y:\n        a()\n"
    with pytest.raises(NoMatchError):
        fuzzy_replace(content, "\n  a()", "\n  a()\n  b()", replace_all=True)
    # a tab-indented file: spaces nested under the shifted tabs would mix the two
    with pytest.raises(NoMatchError):
        fuzzy_replace("if x:\n\t\ta()\n", "\n    a()", "\n    a()\n        b()")
    assert fuzzy_replace("if x:\n\t\ta()\n", "\n    a()", "\n    a()\n    b()").content == (
        "if x:\n\t\ta()\n\t\tb()\n"
    )


def test_fuzzy_replace_overlapping_places_inside_a_line_are_ambiguous_like_exact_ones():
    # Exactly quoted, "f(a) + f(a)" twice in "f(a) + f(a) + f(a)" is refused as ambiguous; with
    # the file's spacing off it must be too, not settled on the leftmost place.
    with pytest.raises(AmbiguousMatchError):
        fuzzy_replace("f(a) + f(a) + f(a)\n", "f(a) + f(a)", "g")
    with pytest.raises(AmbiguousMatchError):
        fuzzy_replace("f(a)  +  f(a)  +  f(a)\n", "f(a) + f(a)", "g")
    with pytest.raises(AmbiguousMatchError):
        fuzzy_replace("a \u2014 b \u2014 a \u2014 b \u2014 a\n", "a -- b -- a", "c")
    # replace_all replaces the leftmost of overlapping places, as it does for exact ones
    replaced = fuzzy_replace("f(a)  +  f(a)  +  f(a)\n", "f(a) + f(a)", "g", replace_all=True)
    assert replaced.content == "g  +  f(a)\n"


def test_fuzzy_replace_control_escapes_new_adds_to_a_quote_escaped_search_are_refused():
    # old escaped only its quotes: nothing says new's \n and \t are line breaks and tabs
    # rather than text (a Windows path, an escape in a string), so the edit is refused.
    content = 'x = "a"\ny = 1\n'
    with pytest.raises(InvalidEditError):
        fuzzy_replace(content, 'x = \\"a\\"', 'x = \\"C:\\new\\table\\"')
    with pytest.raises(InvalidEditError):
        fuzzy_replace(content, 'x = \\"a\\"', 'x = \\"a\\nb\\"')
    with pytest.raises(InvalidEditError):
        fuzzy_replace("a = `Hello ${name}`\n", "a = `Hello \\${name}`", "a = `Hi \\${name}\\n`")
    # where old escaped its line breaks or backslashes, new's escapes are read the same way
    assert fuzzy_replace(content, 'x = \\"a\\"\\ny = 1', 'x = \\"a\\"\\ny = 2').content == (
        'x = "a"\ny = 2\n'
    )
    assert fuzzy_replace(
        'p = "C:\\\\a"\n', 'p = \\"C:\\\\\\\\a\\"', 'p = \\"C:\\\\\\\\b\\"'
    ).content == ('p = "C:\\\\b"\n')


def test_fuzzy_replace_typography_the_edit_changes_is_written_as_new_has_it():
    # old wrote the file's em dash as "--"; new writes a hyphen there: that is a change, and
    # the hyphen is written, not the file's dash.
    assert fuzzy_replace("note: x \u2014 y\n", "note: x -- y", "note: x - z").content == (
        "note: x - z\n"
    )
    # where new keeps old's "--", the file's dash is kept
    assert fuzzy_replace("note: x \u2014 y\n", "note: x -- y", "note: x -- z").content == (
        "note: x \u2014 z\n"
    )


def test_fuzzy_replace_block_anchor_never_uses_a_last_anchor_nested_unlike_old():
    # old's last line sits one level deeper than its first; the block one line up has it level
    # with the first, and the real line follows it: inserting there would land in the wrong
    # block. The block that holds the real line, with the line old skipped, is the one used.
    content = (
        "def f():\n    total.delta()\n        if count > 1:\n    if total > 3:\n"
        "        if total > 3:\n            pass\n"
    )
    old = "total.delta()\nif total > 3:\n    if total > 3:"
    new = "total.delta()\nif total > 3:\n    if total > 3:\n    inserted_line()"

    replacement = fuzzy_replace(content, old, new)

    assert replacement.content == content.replace(
        "        if total > 3:\n", "        if total > 3:\n        inserted_line()\n"
    )
    assert (replacement.start_line, replacement.end_line) == (2, 5)
