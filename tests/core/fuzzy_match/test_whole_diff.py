"""A patch's diff is cut for the model; its whole diff is kept for a person to read."""

import neta


def test_a_long_edit_s_diff_is_cut_for_the_model_and_whole_for_a_person(tmp_path):
    before = "".join(f"row {n}\n" for n in range(300))
    (tmp_path / "big.txt").write_text(before)
    outcome = neta.patch_file("big.txt", before, before.upper(), root=tmp_path)
    assert outcome.diff.endswith("more diff lines not shown")
    assert len(outcome.diff.splitlines()) == 201
    assert "+ROW 299" in outcome.whole_diff
    assert outcome.whole_diff == neta.text_diff(before, before.upper(), "big.txt", max_lines=None)
    assert outcome.diff == neta.text_diff(before, before.upper(), "big.txt")


def test_a_short_edit_s_diff_is_the_same_whole_or_not(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    outcome = neta.patch_file("a.txt", "two", "three", root=tmp_path)
    assert outcome.diff == outcome.whole_diff
    assert "+three" in outcome.diff
