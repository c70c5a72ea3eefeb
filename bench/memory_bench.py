"""Server memory over many sessions, under the collector settings ``neta serve`` used and uses.

Starts ``neta serve`` (scripted provider) once per collector setting, runs N sessions through
it over WebSocket, ``--concurrent`` at a time (each connects, runs 6 model turns and 5 tool
calls, todo, list_dir, clarify answered, read_file, todo, and disconnects), and prints the
server's resident memory (VmRSS) every ``--every`` sessions and its peak (VmHWM) at the end,
with the CPU time the server spent on the load in all (user + system) and in garbage
collections, and how many of those were full ones. Sessions past the server's 256 idle ones
are dropped from memory as new ones come: what they leave is garbage the collector has to find.

- ``python``: Python's own collector settings (nothing frozen, young threshold 700);
- ``before``: what ``neta serve`` did before: collect, freeze, young threshold 10,000;
- ``now``: ``neta.cli.collector.freeze_startup_objects(serving=True)`` as it stands.

Run: python bench/memory_bench.py [--sessions 2000] [--concurrent 50] [--every 250]
     [--settings python before now]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from loopback import free_port, wait_for_port
from websockets.asyncio.client import connect

TOKEN = "bench-token"
STATS_VARIABLE = "NETA_BENCH_COLLECTOR_STATS"
"""Where the server writes what its collections cost when sent SIGUSR1 (the bench's own)."""

ASK = {"name": "clarify", "arguments": {"question": "Proceed?", "choices": ["yes", "no"]}}
TODO = {"id": "1", "content": "Look around", "status": "in_progress"}
WORK: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "todo", "arguments": {"todos": [TODO]}}]},
    {"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
    {"tool_calls": [ASK]},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
    {"tool_calls": [{"name": "todo", "arguments": {"merge": True, "todos": [TODO]}}]},
    {"text": "Finished."},
]

SETTINGS = ("python", "before", "now")


def _before(*, serving: bool = False) -> None:
    """The settings ``neta serve`` applied before: collect, freeze, young threshold 10,000."""
    if serving:
        gc.collect()
    gc.freeze()
    if serving:
        _, middle, old = gc.get_threshold()
        gc.set_threshold(10_000, middle, old)


def _python(*, serving: bool = False) -> None:
    """Python's own settings: nothing frozen, thresholds untouched."""


def _count_collections(path: str) -> None:
    """Time every collection from now on; write the totals to ``path`` on SIGUSR1."""
    totals = {"seconds": 0.0, "collections": 0, "full": 0}
    started = [0.0]

    def timed(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.process_time()
            return
        totals["seconds"] += time.process_time() - started[0]
        totals["collections"] += 1
        totals["full"] += info["generation"] == 2

    def report(*_: Any) -> None:
        Path(path).write_text(json.dumps(totals))

    gc.callbacks.append(timed)
    signal.signal(signal.SIGUSR1, report)


def serve_with(setting: str, argv: list[str]) -> None:
    """Run ``neta serve ARGV`` in this process with the collector ``setting`` (the child)."""
    from neta.cli import app, collector, serve_cmd

    collector.own_process()
    _count_collections(os.environ[STATS_VARIABLE])
    chosen = {"python": _python, "before": _before}.get(setting)
    if chosen is not None:
        app.freeze_startup_objects = chosen  # type: ignore[attr-defined]
        serve_cmd.freeze_startup_objects = chosen  # type: ignore[attr-defined]
    app.main(["serve", *argv])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time process ``pid`` has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def collector_stats(pid: int, path: Path) -> dict[str, Any]:
    """What the server's collections cost (it writes them to ``path`` when asked)."""
    path.unlink(missing_ok=True)
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + 30
    while not path.exists() or not path.read_text():
        if time.monotonic() > deadline:
            raise SystemExit("the server did not say what its collections cost")
        time.sleep(0.05)
    stats: dict[str, Any] = json.loads(path.read_text())
    return stats


def memory_mib(pid: int, field: str) -> float:
    """``VmRSS`` or ``VmHWM`` of process ``pid``, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def one_session(url: str) -> None:
    async with connect(url, max_size=None) as ws:
        sid = json.loads(await ws.recv())["data"]["sessionId"]
        await ws.send(
            json.dumps({"type": "user_message", "sessionId": sid, "data": {"text": "go"}})
        )
        while True:
            frame = json.loads(await ws.recv())
            if frame["type"] == "clarify_request":
                answer = {"requestId": frame["data"]["requestId"], "answer": "yes"}
                message = {"type": "clarify_response", "sessionId": sid, "data": answer}
                await ws.send(json.dumps(message))
            elif frame["type"] == "error":
                raise SystemExit(f"server error: {frame['data']}")
            elif frame["type"] == "run_finished" and frame["data"].get("agentId") is None:
                if frame["data"]["outcome"] != "completed":
                    raise SystemExit(f"run ended {frame['data']['outcome']}")
                return


async def load(url: str, pid: int, sessions: int, concurrent: int, every: int) -> list[float]:
    """Run ``sessions`` sessions, ``concurrent`` at a time; VmRSS after every ``every``."""
    done = 0
    samples: list[float] = []
    gate = asyncio.Semaphore(concurrent)

    async def guarded() -> None:
        nonlocal done
        async with gate:
            await one_session(url)
        done += 1
        if done % every == 0:
            samples.append(memory_mib(pid, "VmRSS"))

    await asyncio.gather(*(guarded() for _ in range(sessions)))
    return samples


def measure(setting: str, sessions: int, concurrent: int, every: int) -> dict[str, Any]:
    """Start a server with ``setting`` and load it: its RSS samples, peak, CPU, collections."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        (root / "ws" / "notes.txt").write_text("hello\n")
        (root / "script.json").write_text(json.dumps({"turns": WORK}))
        port = free_port()
        stats = root / "collector.json"
        env = {**os.environ, "NETA_HOME": str(root / "home"), "NETA_TOKEN": TOKEN}
        env[STATS_VARIABLE] = str(stats)
        serve_args = ["--port", str(port), "-w", str(root / "ws")]
        serve_args += ["-p", "scripted", "--script", str(root / "script.json")]
        command = [sys.executable, __file__, "--serve", setting, "--", *serve_args]
        server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
        try:
            wait_for_port(port, server, 60)
            url = f"ws://127.0.0.1:{port}/ws?token={TOKEN}"
            cpu, before = cpu_seconds(server.pid), collector_stats(server.pid, stats)
            samples = asyncio.run(load(url, server.pid, sessions, concurrent, every))
            after = collector_stats(server.pid, stats)
            figures: dict[str, Any] = {
                "samples": samples,
                "peak": memory_mib(server.pid, "VmHWM"),
                "cpu": cpu_seconds(server.pid) - cpu,
                **{key: after[key] - before[key] for key in after},
            }
        finally:
            server.terminate()
            server.wait(timeout=30)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--concurrent", type=int, default=50)
    parser.add_argument("--every", type=int, default=250)
    parser.add_argument("--settings", nargs="+", choices=SETTINGS, default=list(SETTINGS))
    parser.add_argument("--serve", choices=SETTINGS, help=argparse.SUPPRESS)
    parser.add_argument("serve_args", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve_with(args.serve, args.serve_args)
        return
    print(f"{args.sessions} sessions, {args.concurrent} at a time; VmRSS (MiB) every {args.every}")
    for setting in args.settings:
        figures = measure(setting, args.sessions, args.concurrent, args.every)
        row = " ".join(f"{value:6.0f}" for value in figures["samples"])
        print(
            f"{setting:>7}: {row}   peak (VmHWM) {figures['peak']:.0f} MiB; "
            f"CPU {figures['cpu']:.1f} s, of it collections {figures['seconds']:.2f} s "
            f"({figures['collections']} collections, {figures['full']} full)",
            flush=True,
        )


if __name__ == "__main__":
    main()
