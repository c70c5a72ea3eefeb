"""Gateway load: concurrent WebSocket sessions, each a run that stops once to ask the user.

Starts ``neta serve`` on a free 127.0.0.1 port with the ``scripted`` provider, and with the
real ``openai`` provider talking to a local OpenAI-compatible server (started by this script in
its own process; it streams the same turns the script holds, chosen by how many assistant
messages the request carries). Two kinds of run:

- ``clarify``: the model asks (``clarify``), the user answers, the model answers: 2 model
  turns, 1 tool call. The goal below is stated for this run.
- ``work``: 6 model turns and 5 tool calls (todo, list_dir, clarify, read_file, todo).

After a warm-up burst that is not counted (a server in service has its connections to the
model API open and its caches filled), each is loaded twice with N sessions connected at once:

- burst: every session answers as soon as it is asked; runs/s is N over the time from the
  first connection to the last ``run_finished``: what the server can do flat out.
- paced: once every session is waiting on its question, the answers are sent at a steady
  rate (``--rate``, 100/s by default, in a shuffled order), as users answering over time
  would; answer → ``clarify_resolved`` and answer → ``run_finished`` at p50/p99 are the
  latencies a user sees at that load. (Under burst, the answers of all N sessions arrive
  within the same tenth of a second, so its p99 is the time to finish nearly every run.)

Also printed: REST requests that failed when sent over one pooled keep-alive client with pauses
past its pool expiry (``work`` runs only), and the server's peak memory (VmHWM). Goals on a
2-core machine at 200 sessions: answer → ``run_finished`` p99 < 250 ms and >= 100 runs/s.

Run: python bench/gateway_bench.py [--sessions 200] [--provider both|scripted|openai]
     [--run both|clarify|work] [--rate 100]
     python bench/gateway_bench.py --engines --redis URL --database URL [--bursts 3]

Several workers: ``--workers 2 --redis redis://… --database postgresql://…`` starts 1, then 2,
``neta serve`` processes sharing that Redis (the bus) and database (the store), with the
scripted provider and ``work`` runs. Each session's client connects to one worker and answers
its question through a second connection to the next worker (so with 2 workers every answer
crosses to the worker running the session), and prints runs/s and the clarify round trip
(answer sent → ``clarify_resolved`` at the asking client) at p50/p99 for 1 and N workers.

CPU per run of the two engines: ``--engines --redis redis://… --database postgresql://…`` runs
``--bursts`` bursts of ``--sessions`` sessions (after a warm-up burst) against one worker on
SQLite with the in-process bus, then one on PostgreSQL and Redis, and prints side by side the
server process's CPU seconds (user + system) per run, with the Redis commands and SQL
transactions a run costs (``--run clarify`` by default).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from loopback import free_port, wait_for_port
from websockets.asyncio.client import connect

ASK: dict[str, Any] = {
    "tool_calls": [
        {"name": "clarify", "arguments": {"question": "Proceed?", "choices": ["yes", "no"]}}
    ]
}

WORK: list[dict[str, Any]] = [
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
    ASK,
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

RUNS: dict[str, list[dict[str, Any]]] = {"clarify": [ASK, {"text": "Finished."}], "work": WORK}
"""The runs the bench loads the server with, by name."""

TOKEN = "bench-token"
"""The token the servers require (``neta serve`` makes one of its own without)."""


# -- the local OpenAI-compatible server ---------------------------------------------------------


def _chunks(turn: dict[str, Any]) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "bench",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    out = [chunk({"role": "assistant", "content": ""})]
    if "text" in turn:
        out.append(chunk({"content": turn["text"]}))
    for i, call in enumerate(turn.get("tool_calls", [])):
        head = {
            "index": i,
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
        }
        out.append(chunk({"tool_calls": [head]}))
    out.append(chunk({}, "tool_calls" if "tool_calls" in turn else "stop"))
    return out


def serve_model(port: int, run: str) -> None:
    """Serve ``run``'s turns as a streaming Chat Completions endpoint (in its own process)."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    streams = [
        "".join(f"data: {json.dumps(c)}\n\n" for c in _chunks(turn)) + "data: [DONE]\n\n"
        for turn in RUNS[run]
    ]

    async def completions(request: Request) -> StreamingResponse:
        body = await request.json()
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")

        async def send() -> AsyncIterator[bytes]:
            yield streams[min(turn, len(streams) - 1)].encode()

        return StreamingResponse(send(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


# -- the clients --------------------------------------------------------------------------------


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Figures:
    """What one load measured: per-session latencies (ms) and the times runs finished."""

    def __init__(self) -> None:
        self.resolved: list[float] = []
        self.finished: list[float] = []
        self.ends: list[float] = []


class Pacer:
    """Lets waiting sessions send their answers: at once, or at a steady rate once all wait.

    Args:
        sessions: how many sessions will ask.
        rate: answers per second, or ``None`` for each at once.
    """

    def __init__(self, sessions: int, rate: float | None) -> None:
        self.sessions = sessions
        self.rate = rate
        self._waiting: list[asyncio.Future[None]] = []
        self._all_waiting = asyncio.Event()

    async def turn(self) -> None:
        """Wait until this session may answer."""
        if self.rate is None:
            return
        go = asyncio.get_running_loop().create_future()
        self._waiting.append(go)
        if len(self._waiting) == self.sessions:
            self._all_waiting.set()
        await go

    async def release(self) -> None:
        """Once every session waits, let them answer one by one at ``rate``, shuffled."""
        if self.rate is None:
            return
        await self._all_waiting.wait()
        random.shuffle(self._waiting)
        start = time.perf_counter()
        for i, go in enumerate(self._waiting):
            delay = start + i / self.rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            go.set_result(None)


async def one_session(url: str, pacer: Pacer, figures: Figures) -> None:
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
                await pacer.turn()
                sent = time.perf_counter()
                answer = {"requestId": frame["data"]["requestId"], "answer": "yes"}
                await ws.send(
                    json.dumps({"type": "clarify_response", "sessionId": sid, "data": answer})
                )
            elif kind == "clarify_resolved":
                figures.resolved.append((time.perf_counter() - sent) * 1000)
            elif kind == "error":
                raise SystemExit(f"server error: {frame['data']}")
            elif kind == "run_finished":
                figures.ends.append(time.perf_counter())
                figures.finished.append((figures.ends[-1] - sent) * 1000)
                assert frame["data"]["outcome"] == "completed", frame
                return


async def load(url: str, sessions: int, rate: float | None) -> tuple[float, Figures]:
    """Run ``sessions`` at once; the seconds from the start to the last run_finished."""
    figures = Figures()
    pacer = Pacer(sessions, rate)
    started = time.perf_counter()
    await asyncio.gather(
        pacer.release(), *(one_session(url, pacer, figures) for _ in range(sessions))
    )
    return max(figures.ends) - started, figures


async def rest_load(base: str, sessions: int) -> tuple[int, int]:
    """Each session: create, message, idle past httpx's 5 s pool expiry, message again.

    All through one pooled keep-alive client; returns (requests, failed requests).
    """
    import httpx

    failed = 0
    sent = 0

    async def one(http: httpx.AsyncClient) -> None:
        nonlocal failed, sent
        try:
            sent += 1
            sid = (await http.post("/v1/sessions")).json()["sessionId"]
            for pause in (0.0, 5.0):
                await asyncio.sleep(pause)
                sent += 1
                reply = await http.post(f"/v1/sessions/{sid}/messages", json={"text": "go"})
                reply.raise_for_status()
        except httpx.HTTPError:
            failed += 1

    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as http:
        await asyncio.gather(*(one(http) for _ in range(sessions)))
    return sent, failed


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(provider: str, run: str, sessions: int, rate: float) -> None:
    """Start ``neta serve`` with ``provider``, load it with ``run``s, print the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        (root / "ws" / "notes.txt").write_text("hello\n")
        (root / "script.json").write_text(json.dumps({"turns": RUNS[run]}))
        port = free_port()
        env = {**os.environ, "NETA_HOME": str(root / "home"), "NETA_TOKEN": TOKEN}
        command = [
            sys.executable,
            "-m",
            "neta",
            "serve",
            "--port",
            str(port),
            "-w",
            str(root / "ws"),
        ]
        model = None
        if provider == "openai":
            model_port = free_port()
            model = subprocess.Popen(
                [sys.executable, __file__, "--model-server", str(model_port), "--run", run],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            wait_for_port(model_port, model)
            base = f"http://127.0.0.1:{model_port}/v1"
            command += ["-p", "openai", "-m", "bench", "--base-url", base]
        else:
            command += ["-p", "scripted", "--script", str(root / "script.json")]
        server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
        try:
            wait_for_port(port, server)
            url = f"ws://127.0.0.1:{port}/ws?token={TOKEN}"
            asyncio.run(load(url, sessions, None))  # warm-up, not counted
            elapsed, burst = asyncio.run(load(url, sessions, None))
            _, paced = asyncio.run(load(url, sessions, rate))
            rest = None
            if run == "work":
                rest = asyncio.run(rest_load(f"http://127.0.0.1:{port}", sessions))
            peak = peak_rss_mib(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=15)
            if model is not None:
                model.terminate()
                model.wait(timeout=15)
    turns = len(RUNS[run])
    calls = sum(len(t.get("tool_calls", [])) for t in RUNS[run])
    name = f"[{provider}, {run}]"
    print(f"{name} {sessions} sessions at once, {turns} model turns and {calls} tool calls each")
    print(f"{name} burst: {sessions / elapsed:.1f} runs/s (wall {elapsed:.2f} s)")
    print(
        f"{name} burst: answer -> run_finished p50 {statistics.median(burst.finished):.0f} ms, "
        f"p99 {pct(burst.finished, 0.99):.0f} ms"
    )
    print(
        f"{name} paced at {rate:g} answers/s: answer -> clarify_resolved "
        f"p50 {statistics.median(paced.resolved):.1f} ms, p99 {pct(paced.resolved, 0.99):.1f} ms"
    )
    print(
        f"{name} paced at {rate:g} answers/s: answer -> run_finished "
        f"p50 {statistics.median(paced.finished):.1f} ms, p99 {pct(paced.finished, 0.99):.1f} ms"
    )
    if rest is not None:
        print(
            f"{name} REST, one pooled keep-alive client, pauses past its pool expiry: "
            f"{rest[1]} of {rest[0]} requests failed"
        )
    print(f"{name} server peak memory (VmHWM): {peak:.1f} MiB")


# -- several workers ------------------------------------------------------------------------------


async def crossing_session(
    asking: str, answering: str, resolved: list[float], finished: list[float], ends: list[float]
) -> None:
    """A session asked through ``asking`` and answered through ``answering`` (another worker).

    The answering connection reads its frames as a real client does: one that does not stops
    its socket from being read, and closing it then waits out the close handshake's timeout.
    """
    async with connect(asking, max_size=None) as ws:
        sid = json.loads(await ws.recv())["data"]["sessionId"]
        async with connect(f"{answering}&sessionId={sid}", max_size=None) as other:
            json.loads(await other.recv())  # session_ready
            drain = asyncio.create_task(_drain(other))
            message = {"type": "user_message", "sessionId": sid, "data": {"text": "go"}}
            await ws.send(json.dumps(message))
            sent = 0.0
            try:
                while True:
                    frame = json.loads(await ws.recv())
                    kind = frame["type"]
                    if kind == "clarify_request":
                        sent = time.perf_counter()
                        answer = {"requestId": frame["data"]["requestId"], "answer": "yes"}
                        await other.send(
                            json.dumps(
                                {"type": "clarify_response", "sessionId": sid, "data": answer}
                            )
                        )
                    elif kind == "clarify_resolved":
                        resolved.append((time.perf_counter() - sent) * 1000)
                    elif kind == "error":
                        raise SystemExit(f"server error: {frame['data']}")
                    elif kind == "run_finished" and frame["data"].get("agent_id") is None:
                        ends.append(time.perf_counter())
                        finished.append((ends[-1] - sent) * 1000)
                        assert frame["data"]["outcome"] == "completed", frame
                        return
            finally:
                drain.cancel()


async def _drain(ws: Any) -> None:
    """Read (and drop) a connection's frames; an error frame stops the bench."""
    async for raw in ws:
        frame = json.loads(raw)
        if frame["type"] == "error":
            raise SystemExit(f"server error on the answering connection: {frame['data']}")


async def crossing_load(urls: list[str], sessions: int) -> tuple[float, list[float], list[float]]:
    """Run the sessions at once; the time to the last ``run_finished``, and the latencies."""
    resolved: list[float] = []
    finished: list[float] = []
    ends: list[float] = []
    started = time.perf_counter()
    await asyncio.gather(
        *(
            crossing_session(
                urls[i % len(urls)], urls[(i + 1) % len(urls)], resolved, finished, ends
            )
            for i in range(sessions)
        )
    )
    return max(ends) - started, resolved, finished


def measure_workers(count: int, sessions: int, redis: str, database: str) -> dict[str, float]:
    """Start ``count`` workers on the shared Redis and database and load them."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        (root / "ws" / "notes.txt").write_text("hello\n")
        (root / "script.json").write_text(json.dumps({"turns": WORK}))
        env = {
            **os.environ,
            "NETA_HOME": str(root / "home"),
            "NETA_REDIS_URL": redis,
            "NETA_DATABASE_URL": database,
            "NETA_TOKEN": TOKEN,
        }
        ports = [free_port() for _ in range(count)]
        servers = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "neta",
                    "serve",
                    "--port",
                    str(port),
                    "-w",
                    str(root / "ws"),
                    "-p",
                    "scripted",
                    "--script",
                    str(root / "script.json"),
                ],
                env=env,
                stdout=subprocess.DEVNULL,
            )
            for port in ports
        ]
        try:
            for port, server in zip(ports, servers, strict=True):
                wait_for_port(port, server)
            urls = [f"ws://127.0.0.1:{port}/ws?token={TOKEN}" for port in ports]
            elapsed, resolved, finished = asyncio.run(crossing_load(urls, sessions))
        finally:
            for server in servers:
                server.terminate()
                server.wait(timeout=15)
    return {
        "runs/s": sessions / elapsed,
        "clarify p50 ms": statistics.median(resolved),
        "clarify p99 ms": pct(resolved, 0.99),
        "finished p99 ms": pct(finished, 0.99),
    }


def compare_workers(workers: int, sessions: int, redis: str, database: str) -> None:
    """Print 1 and ``workers`` workers side by side."""
    counts = sorted({1, workers})
    figures = {n: measure_workers(n, sessions, redis, database) for n in counts}
    print(
        f"{sessions} concurrent sessions on Redis + {database.split('://')[0]}, scripted provider"
    )
    print(f"{'':18}" + "".join(f"{f'{n} worker(s)':>14}" for n in counts))
    for name in ("runs/s", "clarify p50 ms", "clarify p99 ms", "finished p99 ms"):
        print(f"{name:18}" + "".join(f"{figures[n][name]:14.1f}" for n in counts))


# -- CPU per run of the two engines ---------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """The CPU time (user + system, all threads) process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def engine_counts(redis: str | None, database: str | None) -> tuple[int, int]:
    """Commands Redis has served and transactions the database has committed, so far."""
    commands = transactions = 0
    if redis is not None:
        import redis as redis_client

        client = redis_client.Redis.from_url(redis)
        try:
            commands = int(client.info("stats")["total_commands_processed"])
        finally:
            client.close()
    if database is not None:
        import psycopg

        with psycopg.connect(database, autocommit=True) as db:
            db.execute("SELECT pg_stat_clear_snapshot()")
            row = db.execute(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
            ).fetchone()
            transactions = int(row[0]) if row else 0
    return commands, transactions


def measure_engine(
    run: str, sessions: int, bursts: int, redis: str | None, database: str | None
) -> dict[str, float]:
    """What one ``neta serve`` worker costs per run, over ``bursts`` bursts after a warm-up one.

    On SQLite and the in-process bus when ``redis`` and ``database`` are ``None``.
    """
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        (root / "ws" / "notes.txt").write_text("hello\n")
        (root / "script.json").write_text(json.dumps({"turns": RUNS[run]}))
        env = {**os.environ, "NETA_HOME": str(root / "home"), "NETA_TOKEN": TOKEN}
        env.pop("NETA_REDIS_URL", None)
        env.pop("NETA_DATABASE_URL", None)
        if redis is not None and database is not None:
            env |= {"NETA_REDIS_URL": redis, "NETA_DATABASE_URL": database}
        port = free_port()
        command = [sys.executable, "-m", "neta", "serve", "--port", str(port)]
        command += ["-w", str(root / "ws"), "-p", "scripted", "--script", str(root / "script.json")]
        server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
        try:
            wait_for_port(port, server)
            url = f"ws://127.0.0.1:{port}/ws?token={TOKEN}"
            asyncio.run(load(url, sessions, None))  # warm-up, not counted
            time.sleep(1)  # the warm-up's sessions go idle (their leases are given up)
            cpu, counts, wall = cpu_seconds(server.pid), engine_counts(redis, database), 0.0
            for _ in range(bursts):
                wall += asyncio.run(load(url, sessions, None))[0]
            time.sleep(1)  # as after the warm-up: what the runs leave to do afterwards counts
            used = cpu_seconds(server.pid) - cpu
            after = engine_counts(redis, database)
        finally:
            server.terminate()
            server.wait(timeout=15)
    runs = sessions * bursts
    return {
        "runs/s": runs / wall,
        "CPU ms/run": used / runs * 1000,
        "Redis commands/run": (after[0] - counts[0]) / runs,
        "SQL transactions/run": (after[1] - counts[1]) / runs,
    }


def compare_engines(run: str, sessions: int, bursts: int, redis: str, database: str) -> None:
    """Print the server's CPU per run on SQLite and on Redis + PostgreSQL side by side."""
    figures = {
        "SQLite": measure_engine(run, sessions, bursts, None, None),
        "Redis + PostgreSQL": measure_engine(run, sessions, bursts, redis, database),
    }
    print(
        f"one worker, scripted provider, {run} runs: {bursts} bursts of {sessions} sessions "
        "after a warm-up burst; CPU is the server process's (user + system)"
    )
    print(f"{'':22}" + "".join(f"{name:>20}" for name in figures))
    for name in ("runs/s", "CPU ms/run", "Redis commands/run", "SQL transactions/run"):
        print(f"{name:22}" + "".join(f"{f[name]:20.2f}" for f in figures.values()))
    print("(Redis commands include those its publish script runs; each SQL transaction is one")
    print("statement, one round trip)")
    ratio = figures["Redis + PostgreSQL"]["CPU ms/run"] / figures["SQLite"]["CPU ms/run"]
    print(f"CPU per run, Redis + PostgreSQL / SQLite: {ratio:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--provider", choices=["both", "scripted", "openai"], default="both")
    parser.add_argument("--run", choices=["both", *RUNS], default="both")
    parser.add_argument("--rate", type=float, default=100.0, help="paced answers per second")
    parser.add_argument("--workers", type=int, default=1, help="compare 1 and N workers")
    parser.add_argument(
        "--engines",
        action="store_true",
        help="CPU per run of one worker on SQLite and on --redis + --database, side by side",
    )
    parser.add_argument("--bursts", type=int, default=3, help="counted bursts for --engines")
    parser.add_argument("--redis", help="the bus for --workers (redis://…)")
    parser.add_argument("--database", help="the store for --workers (postgresql://…)")
    parser.add_argument("--model-server", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model_server:
        serve_model(args.model_server, "work" if args.run == "both" else args.run)
        return
    if args.engines:
        if not (args.redis and args.database):
            parser.error("--engines needs --redis and --database")
        run = "clarify" if args.run == "both" else args.run
        compare_engines(run, args.sessions, args.bursts, args.redis, args.database)
        return
    if args.workers > 1 or args.redis:
        if not (args.redis and args.database):
            parser.error("--workers needs --redis and --database")
        compare_workers(args.workers, args.sessions, args.redis, args.database)
        return
    providers = ("scripted", "openai") if args.provider == "both" else (args.provider,)
    runs = tuple(RUNS) if args.run == "both" else (args.run,)
    for run in runs:
        for provider in providers:
            measure(provider, run, args.sessions, args.rate)


if __name__ == "__main__":
    main()
