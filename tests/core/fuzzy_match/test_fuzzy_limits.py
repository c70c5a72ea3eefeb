"""What an edit may cost: counts that agree with each other, and output of bounded size."""

from __future__ import annotations

import pytest

from neta.fuzzy_match import AmbiguousMatchError, InvalidEditError, fuzzy_replace


def test_ambiguity_message_counts_overlapping_places_as_replace_all_does():
    with pytest.raises(AmbiguousMatchError) as caught:
        fuzzy_replace("aaaa", "aa", "b")
    replaced = fuzzy_replace("aaaa", "aa", "b", replace_all=True)

    assert replaced.count == 2
    assert replaced.content == "bb"
    assert "old_string matches 2 places" in str(caught.value)
    assert "3 places" not in str(caught.value)


def test_ambiguity_message_of_self_overlapping_search_says_what_replace_all_would_do():
    with pytest.raises(AmbiguousMatchError) as caught:
        fuzzy_replace("x\nx\nx", "x\nx", "y")
    replaced = fuzzy_replace("x\nx\nx", "x\nx", "y", replace_all=True)

    assert replaced.count == 1
    assert caught.value.lines == [1, 2]
    assert "replace_all would replace 1" in str(caught.value)


def test_ambiguity_message_of_separate_places_counts_them_all():
    with pytest.raises(AmbiguousMatchError) as caught:
        fuzzy_replace("a = 1\nb = 1\nc = 1\n", "1", "2")

    assert "old_string matches 3 places" in str(caught.value)
    assert fuzzy_replace("a = 1\nb = 1\nc = 1\n", "1", "2", replace_all=True).count == 3


def test_replace_all_growing_the_file_past_ten_times_is_refused():
    content = "x = a\n" * 200_000

    with pytest.raises(InvalidEditError) as caught:
        fuzzy_replace(content, "a", "b" * 100, replace_all=True)

    message = str(caught.value)
    assert "The file was not changed" in message
    assert "200000" in message.replace(",", "")


def test_replace_all_past_64_mib_is_refused_even_below_ten_times():
    content = "ab\n" * 3_000_000

    with pytest.raises(InvalidEditError):
        fuzzy_replace(content, "ab", "a" * 30, replace_all=True)


def test_replace_all_by_lines_past_the_limit_is_refused():
    content = "  x = a  \n" * 120_000

    with pytest.raises(InvalidEditError) as caught:
        fuzzy_replace(content, "x  =  a", "x = " + "b" * 100, replace_all=True)

    assert "replace_all would replace 120000 places" in str(caught.value)
    assert fuzzy_replace(content[:100], "x  =  a", "y", replace_all=True).strategy == (
        "indent_flexible"
    )


def test_replace_all_that_grows_a_small_file_a_little_is_allowed():
    replaced = fuzzy_replace("a\n", "a", "b" * 200, replace_all=True)

    assert replaced.content == "b" * 200 + "\n"


def test_ambiguity_message_of_one_stretch_of_repeated_text_never_says_it_matches_one_place():
    # 11 starting positions, each inside the first occurrence: replace_all would replace 1.
    with pytest.raises(AmbiguousMatchError) as caught:
        fuzzy_replace("x\n" * 50, "x\n" * 40, "y\n")

    message = str(caught.value)
    assert "old_string occurs 11 times" in message
    assert "every occurrence overlaps the first" in message
    assert "replace_all would replace 1 of them, the first (line 1)" in message
    assert "matches 1 place" not in message


def test_ambiguity_message_stopped_counting_says_at_least_for_both_counts():
    with pytest.raises(AmbiguousMatchError) as caught:
        fuzzy_replace("}\n" * 2000, "}\n}\n}", "]")

    message = str(caught.value)
    assert "old_string matches at least 334 places" in message
    assert "replace_all would replace at least 334 of them" in message


def test_ambiguity_message_stopped_counting_inside_one_stretch_claims_no_count_for_replace_all():
    with pytest.raises(AmbiguousMatchError) as caught:
        fuzzy_replace("x\n" * 3000, "x\n" * 1500, "y\n")

    message = str(caught.value)
    assert "old_string occurs at least 1000 times" in message
    assert "counting stopped there" in message
    assert "replace_all would replace" not in message
