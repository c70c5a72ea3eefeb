"""Timings of neta.fuzzy_match on large inputs, each against a plain-``str`` baseline.

Run from the repository root: ``python bench/fuzzy_bench.py``. Every case is built from
seeded random "source code", so runs are comparable, and is timed as the best of a few runs
(in CPU time of this process, so other load on the machine does not count; quick cases are
repeated for at least 0.3 s) together with a baseline on the same input, measured in the same
run, alternating with it:

- a unique exact match must cost at most 3x ``content.find(old)`` + ``content.count(old)``;
- ``replace_all`` with 50,000 exact hits at most 3x ``content.replace(old, new)``;
- every other case must finish in under 50 ms (its baseline, one ``content.splitlines()``,
  is printed for scale);
- each case is also run on an input 4x as big, and its growth factor printed: a linear cost
  grows about 4x, a quadratic one 16x; more than 8x fails.

The script prints one line per case and exits 1 when a ratio, the budget or a growth factor
is exceeded.
"""

from __future__ import annotations

import random
import string
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from neta.fuzzy_match import MatchError, fuzzy_replace

RUNS = 7
BIG_RUNS = 3
MIN_SECONDS = 0.3
MAX_RUNS = 400
BUDGET_MS = 50.0
RATIO_LIMIT = 3.0
GROWTH_LIMIT = 8.0
SCALE = 4

VERBS = ["load", "parse", "save", "merge", "check", "build", "render", "fetch", "apply", "scan"]
NOUNS = ["data", "items", "config", "result", "record", "buffer", "index", "token", "state"]
ARGS = ["path", "value", "options", "count", "limit", "source", "target", "mode"]


@dataclass(frozen=True)
class Case:
    """One timed call, the plain-``str`` baseline on the same input, and how it is judged.

    Attributes:
        name: what the call does.
        run: the call; returns the strategy used or the error that refused it.
        baseline: the plain string operation it is compared with.
        ratio_limit: the most ``run`` may cost relative to ``baseline``, or None when the
            absolute budget applies instead.
    """

    name: str
    run: Callable[[], str]
    baseline: Callable[[], object]
    ratio_limit: float | None = None


def python_source(line_count: int, seed: int) -> list[str]:
    """Lines of plausible Python: many short functions with numbered names."""
    rng = random.Random(seed)
    lines: list[str] = []
    number = 0
    while len(lines) < line_count:
        verb, noun = rng.choice(VERBS), rng.choice(NOUNS)
        lines.append(f"def {verb}_{noun}_{number}({rng.choice(ARGS)}, {rng.choice(ARGS)}):")
        for _ in range(rng.randint(2, 6)):
            call = f"{rng.choice(VERBS)}({rng.choice(ARGS)}, {rng.randint(0, 999)})"
            lines.append(f"    {rng.choice(NOUNS)} = {call}")
        lines.append(f"    return {rng.choice(NOUNS)}")
        lines.append("")
        number += 1
    return lines[:line_count]


def brace_source(blocks: int, seed: int) -> list[str]:
    """Lines of JavaScript-like code where ``blocks`` lines are a lone ``}``."""
    rng = random.Random(seed)

    def word() -> str:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 9)))

    lines: list[str] = []
    for number in range(blocks):
        lines.append(f"function {word()}{number}({word()}) {{")
        lines.append(f"  const {word()} = {word()}.{word()}({rng.randint(0, 999)});")
        lines.append(f"  return {word()}({word()}, {word()});")
        lines.append("}")
    return lines


def outcome(call: Callable[[], object]) -> str:
    """What a call ended with: the strategy that matched, or the error refusing it."""
    try:
        result = call()
    except MatchError as exc:
        return type(exc).__name__
    return str(getattr(result, "strategy", result))


def read_once(content: str) -> Callable[[], object]:
    """The baseline of the budgeted cases: one pass splitting the file into lines."""
    return content.splitlines


def exact_near_end(scale: int) -> Case:
    lines = python_source(20_000 * scale, seed=1)
    content = "\n".join(lines) + "\n"
    # The last function that starts at least 50 lines before the end: its name is unique.
    at = max(number for number, line in enumerate(lines[:-50]) if line.startswith("def "))
    old = "\n".join(lines[at : at + 4])
    return Case(
        f"unique exact match near the end of a {len(lines):,}-line file",
        lambda: outcome(lambda: fuzzy_replace(content, old, old.upper())),
        lambda: (content.find(old), content.count(old)),
        RATIO_LIMIT,
    )


def replace_all_hits(scale: int) -> Case:
    hits = 50_000 * scale
    content = "".join(f"value_{number} = old_name(value_{number})\n" for number in range(hits))
    return Case(
        f"replace_all with {hits:,} exact hits",
        lambda: outcome(lambda: fuzzy_replace(content, "old_name(", "new_name(", replace_all=True)),
        lambda: content.replace("old_name(", "new_name("),
        RATIO_LIMIT,
    )


def no_match_40_lines(scale: int) -> Case:
    lines = python_source(20_000 * scale, seed=2)
    content = "\n".join(lines) + "\n"
    block = lines[10_000:10_040]
    # 22 of 40 lines rewritten (first and last among them): too few for context_aware, no
    # anchors for block_anchor. A blank first line, a smart quote and an escaped newline make
    # trimmed_boundary, unicode_normalized and escape_normalized run too.
    search = [
        line if index % 2 and index != 39 else f"    x_{index} = 'new'"
        for index, line in enumerate(block)
    ]
    search[3] = "    note = \u201cdone\u201d  # a\\n"
    old = "\n" + "\n".join(search) + "\n\n"
    return Case(
        f"40-line search matching nothing in a {len(lines):,}-line file (all 9 strategies)",
        lambda: outcome(lambda: fuzzy_replace(content, old, "pass\n")),
        read_once(content),
    )


def brace_anchored(scale: int) -> Case:
    lines = brace_source(10_000 * scale, seed=3)
    content = "\n".join(lines) + "\n"
    block = lines[20_003:20_008]  # "}" ... "}" around one function
    typo = [*block[:3], block[3].replace("return", "retrun"), block[4]]
    old = "\n".join(typo)
    # The added line goes between two lines the file has (an insertion next to the misspelt
    # line would be refused).
    new = "\n".join([*typo[:2], "  // checked", *typo[2:]])
    return Case(
        f"5-line search anchored on }} in a file with {len(lines) // 4:,} }} lines",
        lambda: outcome(lambda: fuzzy_replace(content, old, new)),
        read_once(content),
    )


def minified_typo(scale: int) -> Case:
    rng = random.Random(4)
    parts = []
    size = 500_000 * scale
    while sum(map(len, parts)) < size:
        name = f"{rng.choice(VERBS)}{rng.randint(0, 99999)}"
        parts.append(
            f"function {name}(a,b){{return {rng.choice(NOUNS)}(a,b)+{rng.randint(0, 9)}}};"
        )
    content = "".join(parts)
    middle = len(content) // 2
    search = content[middle : middle + 200]
    old = search[:100] + ("X" if search[100] != "X" else "Y") + search[101:]
    return Case(
        f"200-character search with a typo in a {size // 1000:,} KB one-line minified file",
        lambda: outcome(lambda: fuzzy_replace(content, old, "x")),
        read_once(content),
    )


def long_block_one_wrong_line(scale: int) -> Case:
    lines = python_source(50_000 * scale, seed=5)
    content = "\n".join(lines) + "\n"
    block = lines[30_000:30_300]
    wrong = list(block)
    wrong[150] = wrong[150] + "  # stale"
    new = list(wrong)
    new[200] = "    # reviewed"
    return Case(
        f"300-line search with one wrong line in a {len(lines):,}-line file",
        lambda: outcome(lambda: fuzzy_replace(content, "\n".join(wrong), "\n".join(new))),
        read_once(content),
    )


def every_other_line_rewritten(scale: int) -> Case:
    lines = python_source(10_000 * scale, seed=6)
    content = "".join(f"\t{line}\n" if line else "\n" for line in lines)
    # The whole file quoted with spaces for its tabs, every other line changed: a diff of
    # thousands of short stretches, each re-indented back to tabs.
    old = content.replace("\t", "    ")
    new = "".join(
        line + "  # checked\n" if number % 2 and line.strip() else line + "\n"
        for number, line in enumerate(old.split("\n")[:-1])
    )
    return Case(
        f"whole {len(lines):,}-line file quoted, every other line changed, tabs re-indented",
        lambda: outcome(lambda: fuzzy_replace(content, old, new)),
        read_once(content),
    )


def line_broken_fragment_in_minified(scale: int) -> Case:
    hits = 120_000 * scale
    content = " + ".join(["(a)"] * hits)
    return Case(
        f"line-broken 3-character search in a one-line file ({hits:,} hits)",
        lambda: outcome(lambda: fuzzy_replace(content, "\n(a)\n", "\n(b)\n")),
        read_once(content),
    )


BUILDERS: list[Callable[[int], Case]] = [
    exact_near_end,
    replace_all_hits,
    no_match_40_lines,
    brace_anchored,
    minified_typo,
    long_block_one_wrong_line,
    every_other_line_rewritten,
    line_broken_fragment_in_minified,
]


def best_of(
    call: Callable[[], object], baseline: Callable[[], object], runs: int = RUNS
) -> tuple[float, float]:
    """The fastest of ``runs`` or more calls of each, in milliseconds of this process's CPU time.

    CPU time rather than wall time, so that other load on the machine does not count; the call
    and its baseline alternate, so that what load does count weighs on both alike, and quick
    ones are repeated until they have run for a while, so that their best is a steady one.
    """
    best = [float("inf"), float("inf")]
    spent = 0.0
    done = 0
    while done < runs or (spent < MIN_SECONDS and done < MAX_RUNS):
        for slot, timed in enumerate((call, baseline)):
            started = time.process_time()
            timed()
            elapsed = time.process_time() - started
            best[slot] = min(best[slot], elapsed * 1000.0)
            spent += elapsed
        done += 1
    return best[0], best[1]


def judge(case: Case, millis: float, base: float) -> tuple[float, str]:
    """The ratio to the baseline and the verdict on it (or on the budget)."""
    ratio = millis / base if base > 0 else float("inf")
    if case.ratio_limit is not None:
        return ratio, "ok" if ratio <= case.ratio_limit else f"RATIO > {case.ratio_limit:g}"
    return ratio, "ok" if millis < BUDGET_MS else f"OVER {BUDGET_MS:g} ms"


def main() -> int:
    """Time every case and its bigger variant; the exit status says whether all held."""
    failed = 0
    print(f"{'case':<84} {'time':>9} {'baseline':>9} {'ratio':>7}  verdict  result")
    for build in BUILDERS:
        small, big = build(1), build(SCALE)
        result = small.run()
        millis, base = best_of(small.run, small.baseline)
        ratio, verdict = judge(small, millis, base)
        failed += verdict != "ok"
        print(
            f"{small.name:<84} {millis:7.2f}ms {base:7.2f}ms {ratio:6.1f}x  {verdict:<7}  {result}"
        )
        big_millis, big_base = best_of(big.run, big.baseline, BIG_RUNS)
        growth = big_millis / millis if millis > 0 else float("inf")
        grew = "ok" if growth <= GROWTH_LIMIT else f"GROWTH > {GROWTH_LIMIT:g}"
        failed += grew != "ok"
        big_ratio = big_millis / big_base if big_base > 0 else float("inf")
        print(
            f"  {SCALE}x: {big.name:<78} {big_millis:7.2f}ms {big_base:7.2f}ms "
            f"{big_ratio:6.1f}x  {grew:<7}  grew {growth:.1f}x"
        )
    print("all within limits" if not failed else f"{failed} limit(s) exceeded")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
