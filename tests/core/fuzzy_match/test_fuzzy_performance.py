"""Guards against the matcher's work growing faster than its input.

No test here holds the matcher to a time: each compares the CPU time of a case with that of
the same case four times smaller, in the same test (bench/ has the timings).
"""

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

FACTOR = 4
"""How many times larger the large case of a growth check is than its small case."""

MAX_GROWTH = 10
"""The most the large case may cost, as a multiple of the small case: work that grows with the
input (or as n log n) stays under it; work growing with its square (16 times) fails."""


def source(line_count: int) -> list[str]:
    lines = []
    for number in range(line_count):
        if number % 5 == 4:
            lines.append("")
        else:
            lines.append(f"    value_{number} = compute(value_{number - 1}, {number % 97})")
    return lines


def growth(case: Callable[[int], Callable[[], object]], large: int) -> float:
    """How many times the CPU time of ``case(large)`` is that of ``case(large // FACTOR)``.

    Each is the best of three runs of this process's CPU time: the suite's other workers on a
    busy machine count in neither, and the ratio, taken within one test, does not depend on
    how fast the machine is. A ``MatchError`` the case raises is part of its work.
    """
    small = _best_cpu_seconds(_quiet(case(large // FACTOR)), runs=3)
    return _best_cpu_seconds(_quiet(case(large)), runs=3) / max(small, 1e-4)


def _quiet(call: Callable[[], object]) -> Callable[[], None]:
    def run() -> None:
        with contextlib.suppress(MatchError):
            call()

    return run


def test_no_match_of_40_lines_grows_with_the_file():
    def case(line_count: int) -> Callable[[], object]:
        lines = source(line_count)
        content = "\n".join(lines) + "\n"
        middle = line_count // 2
        old = "\n".join(x.replace("compute", "combine") for x in lines[middle : middle + 40])
        return lambda: fuzzy_replace(content, old, "pass")

    with pytest.raises(NoMatchError):
        case(20_000)()
    assert growth(case, 20_000) < MAX_GROWTH


def test_replace_all_grows_with_the_number_of_hits():
    replacement = fuzzy_replace("old()\n" * 50_000, "old()", "new()", replace_all=True)
    assert replacement.count == 50_000

    def case(hits: int) -> Callable[[], object]:
        content = "old()\n" * hits
        return lambda: fuzzy_replace(content, "old()", "new()", replace_all=True)

    assert growth(case, 50_000) < MAX_GROWTH


def test_block_anchor_grows_with_the_number_of_anchor_candidates():
    def case(count: int) -> Callable[[], object]:
        blocks = [f"{{\n  step({number});\n  done({number});\n}}" for number in range(count)]
        content = "\n".join(blocks) + "\n"
        old = f"}}\n{{\n  stepp({count // 2});\n  done({count // 2});\n}}"
        return lambda: fuzzy_replace(content, old, "}")

    assert growth(case, 10_000) < MAX_GROWTH


def test_periodic_text_with_a_long_periodic_search_is_not_quadratic():
    def case(size: int) -> Callable[[], object]:
        content = "ab" * size
        return lambda: fuzzy_find_all(content, "ab" * (size // 100))

    with pytest.raises(AmbiguousMatchError):
        fuzzy_replace("ab" * 200_000, "ab" * 2_000, "x")
    assert growth(case, 200_000) < MAX_GROWTH


def test_identical_lines_with_a_long_identical_search_are_not_quadratic():
    with pytest.raises(AmbiguousMatchError):
        fuzzy_replace("x  \n" * 50_000, "x\n" * 300, "y\n")

    def case(count: int) -> Callable[[], object]:
        content = "x  \n" * count
        old = "x\n" * (count // 160)
        return lambda: fuzzy_replace(content, old, "y\n", replace_all=True)

    assert growth(case, 48_000) < MAX_GROWTH


def test_whole_file_old_string_with_a_stale_line_grows_with_the_file():
    lines = source(20_000)
    content = "\n".join(lines) + "\n"
    stale = list(lines)
    stale[7_001] += "  # stale"
    changed = list(stale)
    changed[12_001] = "    value_12001 = 0"

    replacement = fuzzy_replace(content, "\n".join(stale), "\n".join(changed))

    assert replacement.strategy == "block_anchor"
    assert replacement.content == content.replace(lines[12_001], "    value_12001 = 0")

    def case(line_count: int) -> Callable[[], object]:
        lines = source(line_count)
        content = "\n".join(lines) + "\n"
        stale = list(lines)
        stale[line_count // 3] += "  # stale"
        changed = list(stale)
        changed[line_count * 3 // 5] = "    changed = 0"
        return lambda: fuzzy_replace(content, "\n".join(stale), "\n".join(changed))

    assert growth(case, 20_000) < MAX_GROWTH


def test_whole_file_rewrite_of_every_other_line_is_not_quadratic():
    def texts(count: int) -> tuple[str, str, str]:
        content = "".join(f"\tif ready_{number}:\n\t    run({number})\n" for number in range(count))
        old = content.replace("\t", "    ")
        return content, old, old.replace("run(", "stop(")

    content, old, new = texts(10_000)
    replacement = fuzzy_replace(content, old, new)
    assert replacement.content == content.replace("run(", "stop(")

    def case(count: int) -> Callable[[], object]:
        content, old, new = texts(count)
        return lambda: fuzzy_replace(content, old, new)

    assert growth(case, 10_000) < MAX_GROWTH


def test_line_broken_fragment_in_a_huge_line_is_not_quadratic():
    with pytest.raises(NoMatchError):
        fuzzy_replace(" + ".join(["(a)"] * 120_000), "\n(a)\n", "\n(b)\n")

    def case(count: int) -> Callable[[], object]:
        content = " + ".join(["(a)"] * count)
        return lambda: fuzzy_replace(content, "\n(a)\n", "\n(b)\n")

    assert growth(case, 120_000) < MAX_GROWTH


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
