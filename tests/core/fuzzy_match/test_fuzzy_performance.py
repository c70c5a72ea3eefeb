"""Guards against gross slowdowns of the matcher. Limits are generous: bench/ has the numbers."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

import pytest

from neta.fuzzy_match import (
    AmbiguousMatchError,
    MatchError,
    NoMatchError,
    fuzzy_find_all,
    fuzzy_replace,
)

LIMIT_SECONDS = 2.0


def source(line_count: int) -> list[str]:
    lines = []
    for number in range(line_count):
        if number % 5 == 4:
            lines.append("")
        else:
            lines.append(f"    value_{number} = compute(value_{number - 1}, {number % 97})")
    return lines


def seconds(call: Callable[[], object]) -> float:
    """The CPU time ``call`` took in this process: other processes on a busy machine (the
    suite's other workers) do not count, as they would in the wall-clock time."""
    started = time.process_time()
    with contextlib.suppress(MatchError):
        call()
    return time.process_time() - started


def test_no_match_of_40_lines_in_20000_lines_is_fast():
    lines = source(20_000)
    content = "\n".join(lines) + "\n"
    old = "\n".join(line.replace("compute", "combine") for line in lines[9_000:9_040])

    with pytest.raises(NoMatchError):
        fuzzy_replace(content, old, "pass")
    assert seconds(lambda: fuzzy_replace(content, old, "pass")) < LIMIT_SECONDS


def test_replace_all_with_50000_hits_is_fast():
    content = "old()\n" * 50_000

    replacement = fuzzy_replace(content, "old()", "new()", replace_all=True)

    assert replacement.count == 50_000
    assert (
        seconds(lambda: fuzzy_replace(content, "old()", "new()", replace_all=True)) < LIMIT_SECONDS
    )


def test_block_anchor_over_10000_anchor_candidates_is_fast():
    blocks = [f"{{\n  step({number});\n  done({number});\n}}" for number in range(10_000)]
    content = "\n".join(blocks) + "\n"
    old = "}\n{\n  stepp(5000);\n  done(5000);\n}"

    assert seconds(lambda: fuzzy_replace(content, old, "}")) < LIMIT_SECONDS


def test_periodic_text_with_a_long_periodic_search_is_not_quadratic():
    content = "ab" * 200_000

    with pytest.raises(AmbiguousMatchError):
        fuzzy_replace(content, "ab" * 2_000, "x")
    assert seconds(lambda: fuzzy_find_all(content, "ab" * 2_000)) < LIMIT_SECONDS


def test_identical_lines_with_a_long_identical_search_are_not_quadratic():
    content = "x  \n" * 50_000
    old = "x\n" * 300

    with pytest.raises(AmbiguousMatchError):
        fuzzy_replace(content, old, "y\n")
    assert seconds(lambda: fuzzy_replace(content, old, "y\n", replace_all=True)) < LIMIT_SECONDS


def test_whole_file_old_string_with_a_stale_line_is_fast():
    lines = source(20_000)
    content = "\n".join(lines) + "\n"
    stale = list(lines)
    stale[7_001] += "  # stale"
    changed = list(stale)
    changed[12_001] = "    value_12001 = 0"

    replacement = fuzzy_replace(content, "\n".join(stale), "\n".join(changed))

    assert replacement.strategy == "block_anchor"
    assert replacement.content == content.replace(lines[12_001], "    value_12001 = 0")
    assert (
        seconds(lambda: fuzzy_replace(content, "\n".join(stale), "\n".join(changed)))
        < LIMIT_SECONDS
    )


def test_whole_file_rewrite_of_every_other_line_is_not_quadratic():
    content = "".join(f"\tif ready_{number}:\n\t    run({number})\n" for number in range(10_000))
    old = content.replace("\t", "    ")
    new = old.replace("run(", "stop(")

    replacement = fuzzy_replace(content, old, new)

    assert replacement.content == content.replace("run(", "stop(")
    assert seconds(lambda: fuzzy_replace(content, old, new)) < LIMIT_SECONDS


def test_line_broken_fragment_in_a_huge_line_is_not_quadratic():
    content = " + ".join(["(a)"] * 120_000)

    with pytest.raises(NoMatchError):
        fuzzy_replace(content, "\n(a)\n", "\n(b)\n")
    assert seconds(lambda: fuzzy_replace(content, "\n(a)\n", "\n(b)\n")) < LIMIT_SECONDS


def _best_cpu_seconds(call: Callable[[], object], runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.process_time()
        call()
        best = min(best, time.process_time() - started)
    return best


def test_unique_exact_match_costs_about_what_str_find_costs():
    lines = source(20_000)
    content = "\n".join(lines) + "\n"
    old = "\n".join(lines[19_900:19_904])

    replacement = fuzzy_replace(content, old, old.upper())
    matcher = _best_cpu_seconds(lambda: fuzzy_replace(content, old, old.upper()))
    baseline = _best_cpu_seconds(lambda: (content.find(old), content.count(old)))

    assert replacement.content == content.replace(old, old.upper())
    assert (replacement.start_line, replacement.end_line) == (19_901, 19_904)
    assert matcher < max(20 * baseline, 0.005)  # bench/ holds it to 3x; this guards gross slips


def test_replace_all_with_many_exact_hits_costs_about_what_str_replace_costs():
    content = "".join(f"value_{number} = old(value_{number})\n" for number in range(50_000))

    replacement = fuzzy_replace(content, "old(", "new(", replace_all=True)
    matcher = _best_cpu_seconds(lambda: fuzzy_replace(content, "old(", "new(", replace_all=True))
    baseline = _best_cpu_seconds(lambda: content.replace("old(", "new("))

    assert replacement.content == content.replace("old(", "new(")
    assert replacement.count == 50_000
    assert matcher < max(20 * baseline, 0.05)
