"""Timings of neta.fuzzy_match on large inputs: best of a few runs, in milliseconds.

Run from the repository root: ``PYTHONPATH=core python bench/fuzzy_bench.py``. Each case is
built from seeded random "source code", so runs are comparable; the target is under 100 ms.
"""

from __future__ import annotations

import random
import string
import time
from collections.abc import Callable
from dataclasses import dataclass

from neta.fuzzy_match import MatchError, fuzzy_replace

RUNS = 5
TARGET_MS = 100.0

VERBS = ["load", "parse", "save", "merge", "check", "build", "render", "fetch", "apply", "scan"]
NOUNS = ["data", "items", "config", "result", "record", "buffer", "index", "token", "state"]
ARGS = ["path", "value", "options", "count", "limit", "source", "target", "mode"]


@dataclass(frozen=True)
class Case:
    """One timed call: what it does, and the call itself."""

    name: str
    run: Callable[[], str]


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


def exact_near_end() -> Case:
    lines = python_source(20_000, seed=1)
    content = "\n".join(lines) + "\n"
    old = "\n".join(lines[19_950:19_954])
    return Case(
        "unique exact match near the end of a 20,000-line file",
        lambda: outcome(lambda: fuzzy_replace(content, old, old.upper())),
    )


def no_match_40_lines() -> Case:
    lines = python_source(20_000, seed=2)
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
        "40-line search matching nothing in a 20,000-line file (all 9 strategies)",
        lambda: outcome(lambda: fuzzy_replace(content, old, "pass\n")),
    )


def brace_anchored() -> Case:
    lines = brace_source(10_000, seed=3)
    content = "\n".join(lines) + "\n"
    block = lines[20_003:20_008]  # "}" ... "}" around one function
    typo = [*block[:3], block[3].replace("return", "retrun"), block[4]]
    old = "\n".join(typo)
    new = "\n".join([*typo[:3], "  // checked", *typo[3:]])
    return Case(
        "5-line search anchored on } in a file with 10,000 } lines",
        lambda: outcome(lambda: fuzzy_replace(content, old, new)),
    )


def minified_typo() -> Case:
    rng = random.Random(4)
    parts = []
    while sum(map(len, parts)) < 500_000:
        name = f"{rng.choice(VERBS)}{rng.randint(0, 99999)}"
        parts.append(
            f"function {name}(a,b){{return {rng.choice(NOUNS)}(a,b)+{rng.randint(0, 9)}}};"
        )
    content = "".join(parts)
    middle = len(content) // 2
    search = content[middle : middle + 200]
    old = search[:100] + ("X" if search[100] != "X" else "Y") + search[101:]
    return Case(
        "200-character search with a typo in a 500 KB one-line minified file",
        lambda: outcome(lambda: fuzzy_replace(content, old, "x")),
    )


def long_block_one_wrong_line() -> Case:
    lines = python_source(50_000, seed=5)
    content = "\n".join(lines) + "\n"
    block = lines[30_000:30_300]
    wrong = list(block)
    wrong[150] = wrong[150] + "  # stale"
    new = list(wrong)
    new[200] = "    # reviewed"
    return Case(
        "300-line search with one wrong line in a 50,000-line file",
        lambda: outcome(lambda: fuzzy_replace(content, "\n".join(wrong), "\n".join(new))),
    )


def replace_all_50k() -> Case:
    content = "".join(f"value_{number} = old_name(value_{number})\n" for number in range(50_000))
    return Case(
        "replace_all with 50,000 hits",
        lambda: outcome(lambda: fuzzy_replace(content, "old_name(", "new_name(", replace_all=True)),
    )


def every_other_line_rewritten() -> Case:
    lines = python_source(10_000, seed=6)
    content = "".join(f"\t{line}\n" if line else "\n" for line in lines)
    # The whole file quoted with spaces for its tabs, every other line changed: a diff of
    # thousands of short stretches, each re-indented back to tabs.
    old = content.replace("\t", "    ")
    new = "".join(
        line + "  # checked\n" if number % 2 and line.strip() else line + "\n"
        for number, line in enumerate(old.split("\n")[:-1])
    )
    return Case(
        "whole 10,000-line file quoted, every other line changed, tabs re-indented",
        lambda: outcome(lambda: fuzzy_replace(content, old, new)),
    )


def line_broken_fragment_in_minified() -> Case:
    content = " + ".join(["(a)"] * 120_000)
    return Case(
        "line-broken 3-character search in a 480 KB one-line file (120,000 hits)",
        lambda: outcome(lambda: fuzzy_replace(content, "\n(a)\n", "\n(b)\n")),
    )


def best_of(case: Case) -> tuple[float, str]:
    """The fastest of ``RUNS`` runs, in milliseconds, and what the call ended with."""
    best = float("inf")
    result = ""
    for _ in range(RUNS):
        started = time.perf_counter()
        result = case.run()
        best = min(best, (time.perf_counter() - started) * 1000.0)
    return best, result


def main() -> None:
    cases = [
        exact_near_end(),
        no_match_40_lines(),
        brace_anchored(),
        minified_typo(),
        long_block_one_wrong_line(),
        replace_all_50k(),
        every_other_line_rewritten(),
        line_broken_fragment_in_minified(),
    ]
    width = max(len(case.name) for case in cases)
    for case in cases:
        millis, result = best_of(case)
        verdict = "ok" if millis < TARGET_MS else "SLOW"
        print(f"{case.name:<{width}}  {millis:8.1f} ms  {verdict:<4}  {result}")


if __name__ == "__main__":
    main()
