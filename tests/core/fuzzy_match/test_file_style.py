"""What an edit writes follows the file's style and new_string's own end.

Lines new_string adds are indented with tabs where the file indents with tabs, even when
old_string's lines sit at column 0 and say nothing about it; and at the end of a file without
a final newline, the line breaks new_string ends with (where old_string had none) are
written as new_string has them.
"""

from __future__ import annotations

import pytest

from neta.fuzzy_match import fuzzy_replace
from tests.core.fuzzy_match.code_shapes import GO

# id, old (found loosely at column 0), new (indented with spaces), expected
TABS = [
    pytest.param(
        "func (s *Store) Save(name, data string) error {  \n",
        "func (s *Store) Save(name, data string) error {\n    log.Print(name)\n",
        GO.replace(
            "func (s *Store) Save(name, data string) error {\n",
            "func (s *Store) Save(name, data string) error {\n\tlog.Print(name)\n",
        ),
        id="line-trimmed-body-line",
    ),
    pytest.param(
        "\treturn nil\n}",
        "\treturn nil\n}\n\nfunc (s *Store) Drop(name string) {\n    delete(s.cache, name)\n"
        "    if len(s.cache) == 0 {\n        s.cache = nil\n    }\n}",
        GO.rstrip("\n") + "\n\nfunc (s *Store) Drop(name string) {\n\tdelete(s.cache, name)\n"
        "\tif len(s.cache) == 0 {\n\t\ts.cache = nil\n\t}\n}\n",
        id="whitespace-normalized-new-function",
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), TABS)
def test_fuzzy_replace_lines_added_with_spaces_to_a_tab_indented_file_get_tabs(old, new, expected):
    old = old.replace("\treturn nil", "\treturn  nil")  # spacing off: not an exact match

    replacement = fuzzy_replace(GO, old, new)

    assert replacement.strategy != "exact"
    assert replacement.content == expected


def test_fuzzy_replace_exact_match_writes_new_as_given_even_in_a_tab_indented_file():
    # Found verbatim, the edit is str.replace: new_string's text is the model's to choose.
    old = "func (s *Store) Save(name, data string) error {\n"
    new = old + "    log.Print(name)\n"

    assert fuzzy_replace(GO, old, new).content == GO.replace(old, new)


# id, content (no final newline), old, new, expected
FILE_END = [
    pytest.param("a = 1\nb = 2", "b = 2", "b = 2\nc = 3\n", "a = 1\nb = 2\nc = 3\n", id="newline"),
    pytest.param(
        "a = 1\nb = 2", "b = 2", "b = 2\nc = 3\n\n", "a = 1\nb = 2\nc = 3\n\n", id="blank-line"
    ),
    pytest.param("a = 1\nb = 2", "b = 2", "b = 2\nc = 3", "a = 1\nb = 2\nc = 3", id="none"),
    pytest.param(
        "a = 1\n    b = 2",
        "b  = 2",
        "b  = 2\nc = 3\n",
        "a = 1\n    b = 2\n    c = 3\n",
        id="line-strategy-newline",
    ),
    pytest.param(
        "a = 1\n    b = 2",
        "b  = 2",
        "b  = 2\n\n",
        "a = 1\n    b = 2\n\n",
        id="line-strategy-blank-line",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "expected"), FILE_END)
def test_fuzzy_replace_end_of_a_file_without_final_newline_ends_as_new_says(
    content, old, new, expected
):
    assert fuzzy_replace(content, old, new).content == expected


def test_fuzzy_replace_end_of_a_file_keeps_its_final_newline_when_new_has_none():
    assert fuzzy_replace("a = 1\nb = 2\n", "b = 2\n", "b = 3").content == "a = 1\nb = 3\n"
