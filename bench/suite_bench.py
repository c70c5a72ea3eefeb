"""The test suite's own time: wall seconds, the CPU the run took, and how long the cores idled.

Run: python bench/suite_bench.py [--runs N] [--workers 5,6] [--fresh] [-- PYTEST_ARGS ...]

Each run is the README's test command, ``python -m pytest -n auto``, in this checkout, with
whatever ``PYTEST_ARGS`` follow ``--`` (``NETA_REQUIRE_SERVICES=1`` in the environment makes a
missing service fail its tests instead of skipping them, as in CI). For each run it prints:

- ``wall``: seconds from start to exit;
- ``CPU``: user and system seconds of every process of the run that was waited for (pytest's
  workers, the servers and commands the tests start); not of a daemon that left the tree, as
  PostgreSQL's server does;
- on Linux, from ``/proc/stat`` for the whole machine over the run: how much of the cores' time
  stood idle, and the time the host took from this machine (``steal``);
- pytest's own last line (``1529 passed in 52.9s``).

``--workers 5,6`` sets ``PYTEST_XDIST_AUTO_NUM_WORKERS`` to each count in turn, run after run,
so a busy spell of the host falls on both; the summary gives each count's median. ``--fresh``
removes the checkout's bytecode caches before each run (not the virtual environment's), as a
fresh clone in CI starts. On a shared machine the same commit's time moves by 10 to 20 % as
the host's load does (the same work takes that much more CPU): compare medians of runs taken in
turns.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROC_STAT = Path("/proc/stat")


@dataclass
class Run:
    """One run of the suite and what it cost."""

    workers: str
    wall: float
    user: float
    system: float
    idle_share: float | None  # of the machine's core time over the run; None off Linux
    steal: float | None
    summary: str
    returncode: int

    @property
    def cpu(self) -> float:
        return self.user + self.system


def machine_times() -> tuple[float, float, float] | None:
    """The machine's (all cores) busy, idle and stolen seconds so far; None without /proc."""
    try:
        fields = PROC_STAT.read_text().splitlines()[0].split()[1:]
    except OSError:
        return None
    ticks = [int(field) for field in fields]
    hertz = os.sysconf("SC_CLK_TCK")
    user, nice, system, idle, iowait, irq, softirq, steal = ticks[:8]
    busy = user + nice + system + irq + softirq
    return busy / hertz, (idle + iowait) / hertz, steal / hertz


def remove_bytecode_caches() -> None:
    """The checkout's ``__pycache__`` folders, not those of a virtual environment in it."""
    for folder, children, _ in os.walk(ROOT):
        if "__pycache__" in children:
            shutil.rmtree(Path(folder, "__pycache__"), ignore_errors=True)
        children[:] = [
            child
            for child in children
            if not child.startswith(".") and child not in ("__pycache__", "site-packages")
        ]


def run_suite(workers: str, pytest_args: list[str], *, fresh: bool) -> Run:
    if fresh:
        remove_bytecode_caches()
    env = dict(os.environ)
    if workers != "auto":
        env["PYTEST_XDIST_AUTO_NUM_WORKERS"] = workers
    command = [sys.executable, "-m", "pytest", "-n", "auto", "-q", "-p", "no:cacheprovider"]
    before_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    before_machine = machine_times()
    started = time.perf_counter()
    done = subprocess.run(
        [*command, *pytest_args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    after_machine = machine_times()
    after_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    idle_share = steal = None
    if before_machine is not None and after_machine is not None:
        busy, idle, steal = (b - a for a, b in zip(before_machine, after_machine, strict=True))
        idle_share = idle / (busy + idle) if busy + idle else 0.0
    lines = done.stdout.strip().splitlines()
    return Run(
        workers=workers,
        wall=wall,
        user=after_children.ru_utime - before_children.ru_utime,
        system=after_children.ru_stime - before_children.ru_stime,
        idle_share=idle_share,
        steal=steal,
        summary=lines[-1].strip("= ") if lines else "(no output)",
        returncode=done.returncode,
    )


def describe(number: int, run: Run) -> str:
    text = (
        f"run {number:2d}  workers {run.workers:>4}  wall {run.wall:5.1f} s  "
        f"CPU {run.cpu:5.1f} s (user {run.user:5.1f}, system {run.system:4.1f})"
    )
    if run.idle_share is not None and run.steal is not None:
        text += f"  idle {run.idle_share:4.0%}  steal {run.steal:4.1f} s"
    return f"{text}  | {run.summary}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each worker count")
    parser.add_argument(
        "--workers",
        default="auto",
        help="comma-separated worker counts, run in turns ('auto': what -n auto starts)",
    )
    parser.add_argument("--fresh", action="store_true", help="remove bytecode caches each run")
    options, pytest_args = parser.parse_known_args()
    if pytest_args[:1] == ["--"]:
        pytest_args = pytest_args[1:]
    counts = [count.strip() for count in options.workers.split(",") if count.strip()]
    runs: list[Run] = []
    for _ in range(options.runs):
        for count in counts:
            runs.append(run_suite(count, pytest_args, fresh=options.fresh))
            print(describe(len(runs), runs[-1]), flush=True)
    print()
    for count in counts:
        mine = [run for run in runs if run.workers == count]
        walls = [run.wall for run in mine]
        print(
            f"workers {count:>4}: wall median {statistics.median(walls):5.1f} s "
            f"({min(walls):.1f} - {max(walls):.1f}), "
            f"CPU median {statistics.median(run.cpu for run in mine):5.1f} s, "
            f"{sum(run.returncode != 0 for run in mine)} of {len(mine)} failed"
        )
    return 1 if any(run.returncode != 0 for run in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
