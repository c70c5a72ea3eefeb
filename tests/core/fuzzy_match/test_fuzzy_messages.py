"""What a refused edit tells the model: where, what differs, and what to do next."""

from __future__ import annotations

import pytest

from neta.fuzzy_match import (
    AmbiguousMatchError,
    InvalidEditError,
    MatchError,
    NoMatchError,
    fuzzy_replace,
)

TOTAL = (
    "def total(items):\n"
    "    result = 0\n"
    "    for item in items:\n"
    "        result += item.price\n"
    "    return result\n"
)

JOBS = (
    "try:\n    run_job(1)\nexcept JobError as error:\n    log_failure(error)\n"
    "try:\n    run_job(2)\nexcept JobError as error:\n    log_failure(error)\n"
)
JOB_3 = "try:\n    run_job(3)\nexcept JobError as error:\n    log_failure(error)"


def refusal(content: str, old: str, new: str, *, replace_all: bool = False) -> MatchError:
    with pytest.raises(MatchError) as caught:
        fuzzy_replace(content, old, new, replace_all=replace_all)
    return caught.value


def test_no_match_message_shows_whitespace_visibly_with_line_numbers():
    error = refusal("def f():\n    return  1\n", "def f():\n\treturn 2", "def f():\n\treturn 3")

    assert isinstance(error, NoMatchError)
    assert "line 2" in str(error)
    assert "\u00b7\u00b7\u00b7\u00b7return\u00b7\u00b71" in str(error)
    assert "\u2192return\u00b72" in str(error)


def test_no_match_message_says_which_column_differs():
    error = refusal("if a:\n    b = 1\n", "if a:\n    b = 2", "if a:\n    b = 3")

    assert "line 2 (text differs from column 9)" in str(error)


def test_no_match_message_names_an_indentation_difference():
    error = refusal("one()\n  two()\nthree()\n", "    two()\nfour()", "x")

    assert "line 2 (indentation differs)" in str(error)


def test_no_match_message_says_when_nothing_resembles_the_search():
    error = refusal("alpha\nbeta\n", "zzzz qqqq", "x")

    assert "Nothing in the file resembles it" in str(error)


def test_no_match_message_tells_the_model_to_reread_and_copy_exactly():
    error = refusal("port = 8080\n", "port = 9090", "port = 7070")

    assert "Re-read the file" in str(error)
    assert "copy old_string exactly" in str(error)


def test_no_match_message_inside_a_long_line_points_at_columns():
    line = "".join(f"f{number}(a,b);" for number in range(2_000))
    start = line.index("f1000(")
    old = line[start : start + 60].replace("f1001", "f1O01")

    error = refusal(line, old, "x")

    assert f"inside line 1, columns {start + 1}-" in str(error)


def test_ambiguous_message_lists_lines_and_suggests_context_or_replace_all():
    error = refusal("a = 1\nx\na = 1\n", "a = 1", "a = 2")

    assert isinstance(error, AmbiguousMatchError)
    assert "starting at lines 1 and 3" in str(error)
    assert "more surrounding lines" in str(error)
    assert "replace_all" in str(error)


def test_ambiguous_message_with_many_places_lists_the_first_ten():
    error = refusal("x\n" * 50, "x", "y")

    assert isinstance(error, AmbiguousMatchError)
    assert error.lines == list(range(1, 51))
    assert "and 40 more" in str(error)


def test_ambiguous_fuzzy_message_does_not_offer_replace_all():
    error = refusal(JOBS, JOB_3, "x")

    assert isinstance(error, AmbiguousMatchError)
    assert "set replace_all" not in str(error)
    assert "must be unique" in str(error)


def test_ambiguous_fuzzy_message_with_replace_all_says_it_only_applies_to_exact_matches():
    error = refusal(JOBS, JOB_3, "x", replace_all=True)

    assert "replace_all only applies to exact matches" in str(error)


def test_stale_line_message_shows_the_files_line_and_the_search_line():
    stale = TOTAL.replace("item.price", "item.cost")

    error = refusal(TOTAL, stale, stale.replace("item.cost", "item.cost * 2"))

    assert isinstance(error, NoMatchError)
    assert "line 4" in str(error)
    assert "result\u00b7+=\u00b7item.price" in str(error)
    assert "result\u00b7+=\u00b7item.cost" in str(error)
    assert "block_anchor" in str(error)


def test_already_applied_message_names_the_line_of_new_string():
    error = refusal("a\nx = 2\n", "x = 1", "x = 2")

    assert isinstance(error, InvalidEditError)
    assert "already applied" in str(error)
    assert "line 2" in str(error)


def test_placeholder_message_quotes_the_placeholder_line():
    old = TOTAL.replace("    result = 0\n", "    # ... existing code ...\n")

    error = refusal(TOTAL, old, old.replace("return result", "return 0"))

    assert "'# ... existing code ...'" in str(error)


def test_refusal_messages_say_the_file_was_not_changed():
    errors = [
        refusal("a = 1\na = 1\n", "a = 1", "b"),
        refusal("port = 8080\n", "port = 9090", "port = 7070"),
        refusal("x = 2\n", "x = 1", "x = 2"),
    ]

    assert all("file was not changed" in str(error) for error in errors)
