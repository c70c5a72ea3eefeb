"""What the sandbox costs one ``bash`` call: sandboxed against unsandboxed, in one run.

Runs the same commands through the ``bash`` tool's ``run_command`` with the default sandbox
and with ``--sandbox off``, in turns (so both meet the same load), and prints the median and
the 90th percentile wall time of each, the extra milliseconds and the ratio.

Run: python bench/sandbox_bench.py [--calls 200] [--command true]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from neta import SandboxPolicy
from neta.sandbox import sandbox_unavailable
from neta_base.bash import run_command


async def one_call(command: str, workspace: Path, sandbox: SandboxPolicy | None) -> float:
    started = time.perf_counter()
    run = await run_command(command, cwd=workspace, timeout=60, sandbox=sandbox)
    elapsed = time.perf_counter() - started
    if run.exit_code != 0:
        raise SystemExit(f"{command!r} failed ({run.exit_code}): {run.output}")
    return elapsed


async def measure(command: str, calls: int, workspace: Path) -> dict[str, list[float]]:
    sandboxes = {"unsandboxed": None, "sandboxed": SandboxPolicy()}
    times: dict[str, list[float]] = {name: [] for name in sandboxes}
    for sandbox in sandboxes.values():  # warm up: the probe, the page cache
        await one_call(command, workspace, sandbox)
    for _ in range(calls):
        for name, sandbox in sandboxes.items():
            times[name].append(await one_call(command, workspace, sandbox))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls of each kind")
    parser.add_argument("--command", default="true", help="the command line each call runs")
    options = parser.parse_args()
    reason = sandbox_unavailable()
    if reason is not None:
        sys.exit(reason)
    with tempfile.TemporaryDirectory() as folder:
        times = asyncio.run(measure(options.command, options.calls, Path(folder)))
    medians = {}
    print(f"bash -c {options.command!r}, {options.calls} calls of each kind, in turns")
    for name, samples in times.items():
        samples.sort()
        medians[name] = statistics.median(samples)
        p90 = samples[int(len(samples) * 0.9)]
        print(f"  {name:12} median {medians[name] * 1000:6.2f} ms   p90 {p90 * 1000:6.2f} ms")
    extra = medians["sandboxed"] - medians["unsandboxed"]
    ratio = medians["sandboxed"] / medians["unsandboxed"]
    print(f"  sandbox cost: +{extra * 1000:.2f} ms per call (median), {ratio:.2f}x")


if __name__ == "__main__":
    main()
