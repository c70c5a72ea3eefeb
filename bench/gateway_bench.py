"""Gateway load: concurrent WebSocket sessions, each a scripted 5-tool-call run with a question.

Starts ``neta serve`` (scripted provider) on a free 127.0.0.1 port, connects N clients at once,
and prints throughput, the clarify round trip (answer sent → ``clarify_resolved`` received, and
answer sent → the run's next event) at p50/p99, and the server's peak memory (VmHWM).

Run: python bench/gateway_bench.py [--sessions 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from websockets.asyncio.client import connect

SCRIPT = {
    "turns": [
        {
            "tool_calls": [
                {
                    "name": "todo",
                    "arguments": {
                        "todos": [
                            {"id": "1", "content": "Look around", "status": "in_progress"},
                            {"id": "2", "content": "Ask the user", "status": "pending"},
                        ]
                    },
                }
            ]
        },
        {"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
        {
            "tool_calls": [
                {"name": "clarify", "arguments": {"question": "Proceed?", "choices": ["yes", "no"]}}
            ]
        },
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {
            "tool_calls": [
                {
                    "name": "todo",
                    "arguments": {
                        "merge": True,
                        "todos": [{"id": "1", "content": "Look around", "status": "completed"}],
                    },
                }
            ]
        },
        {"text": "Finished."},
    ]
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def one_session(url: str, answer_rtt: list[float], resume_rtt: list[float]) -> None:
    async with connect(url, max_size=None) as ws:
        ready = json.loads(await ws.recv())
        sid = ready["data"]["sessionId"]
        await ws.send(
            json.dumps({"type": "user_message", "sessionId": sid, "data": {"text": "go"}})
        )
        sent = 0.0
        while True:
            frame = json.loads(await ws.recv())
            kind = frame["type"]
            if kind == "clarify_request":
                sent = time.perf_counter()
                await ws.send(
                    json.dumps(
                        {
                            "type": "clarify_response",
                            "sessionId": sid,
                            "data": {"requestId": frame["data"]["requestId"], "answer": "yes"},
                        }
                    )
                )
            elif kind == "clarify_resolved":
                answer_rtt.append((time.perf_counter() - sent) * 1000)
            elif kind == "tool_result" and frame["data"]["name"] == "clarify":
                resume_rtt.append((time.perf_counter() - sent) * 1000)
            elif kind == "run_finished":
                assert frame["data"]["outcome"] == "completed", frame
                return


async def load(url: str, sessions: int) -> tuple[float, list[float], list[float]]:
    answer_rtt: list[float] = []
    resume_rtt: list[float] = []
    started = time.perf_counter()
    await asyncio.gather(*(one_session(url, answer_rtt, resume_rtt) for _ in range(sessions)))
    return time.perf_counter() - started, answer_rtt, resume_rtt


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=100)
    sessions = parser.parse_args().sessions
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        (root / "ws" / "notes.txt").write_text("hello\n")
        (root / "script.json").write_text(json.dumps(SCRIPT))
        port = free_port()
        env = {**os.environ, "NETA_HOME": str(root / "home")}
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "neta",
                "serve",
                "--port",
                str(port),
                "-p",
                "scripted",
                "--script",
                str(root / "script.json"),
                "-w",
                str(root / "ws"),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise SystemExit("server did not start") from None
                    time.sleep(0.1)
            url = f"ws://127.0.0.1:{port}/ws"
            elapsed, answer_rtt, resume_rtt = asyncio.run(load(url, sessions))
            peak = peak_rss_mib(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=15)
    calls = sessions * 5
    print(f"sessions: {sessions} concurrent, 5 tool calls each (one clarify round trip)")
    print(
        f"wall time: {elapsed:.2f} s; throughput: {sessions / elapsed:.1f} runs/s, "
        f"{calls / elapsed:.0f} tool calls/s"
    )
    print(
        f"clarify answer -> clarify_resolved: p50 {statistics.median(answer_rtt):.1f} ms, "
        f"p99 {pct(answer_rtt, 0.99):.1f} ms"
    )
    print(
        f"clarify answer -> run resumed (tool_result): p50 {statistics.median(resume_rtt):.1f} ms,"
        f" p99 {pct(resume_rtt, 0.99):.1f} ms"
    )
    print(f"server peak memory (VmHWM): {peak:.1f} MiB")


if __name__ == "__main__":
    main()
