"""Runtime overhead: what the loop costs per tool call beyond the tool itself, and how it grows.

Run: python bench/runtime_bench.py

Every workload runs no-op tools through ``Agent.run`` with a provider that replays canned
replies (and keeps nothing, so only the loop is measured). Beside each figure is a baseline
measured in the same process just before: awaiting (or calling) the tool function directly,
with arguments already validated. Overhead = loop time per call - baseline per call.
Goal: at most 0.15 ms overhead per async tool call; history handling linear in the number of
turns (the growth factor compares the last turns of a 5,000-turn run with its first).

Tracing (``neta.tracing``) is measured last, on one workload: off before anything of
OpenTelemetry is loaded (the baseline), off with an SDK tracer provider set as the global one
(an app's own, which Neta leaves alone until ``enable``), and on, with that provider batching
spans to an exporter that drops them (content left out, then recorded). Each is stated as a
ratio of the baseline's overhead per call; off must stay at about 1.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from tempfile import TemporaryDirectory

from pydantic import BaseModel

import neta
import neta.tracing
from neta.providers.base import ModelRequest, ModelResponse, TextSink
from neta.runtime.agent import Agent
from neta.runtime.prompt_builder import build_system_prompt
from neta.tools import ToolCall

GOAL_MS = 0.15
REPEAT = 3


class NoArgs(BaseModel):
    """No arguments."""


async def _async_noop(args: NoArgs) -> str:
    return "ok"


def _sync_noop(args: NoArgs) -> str:
    return "ok"


class NoopPlugin:
    """``count`` no-op tools, each with guidance and a when-to-use line."""

    def __init__(self, count: int, *, async_tools: bool = False) -> None:
        self.count = count
        self.async_tools = async_tools

    @neta.hookimpl
    def neta_toolsets(self) -> list[neta.ToolsetSpec]:
        return [neta.ToolsetSpec(name="noop")]

    @neta.hookimpl
    def neta_tools(self) -> list[neta.ToolSchema]:
        return [
            neta.ToolSchema(
                name=f"noop_{i}",
                toolset="noop",
                description=f"Does nothing (number {i}).",
                args=NoArgs,
                guidance=f"noop_{i} does nothing; call it freely.\nIt never fails.",
                when_to_use=f"When nothing needs doing, use noop_{i}.",
            )
            for i in range(self.count)
        ]

    @neta.hookimpl
    def neta_build_tools(self, session: neta.SessionContext) -> list[neta.Tool]:
        execute = _async_noop if self.async_tools else _sync_noop
        return [neta.Tool(name=f"noop_{i}", execute=execute) for i in range(self.count)]


class Replay:
    """A provider that answers from canned replies and records only when each turn began."""

    def __init__(self, turns: int, calls_per_turn: int) -> None:
        self.replies = [
            ModelResponse(
                tool_calls=[
                    ToolCall(id=f"c{t}_{n}", name=f"noop_{n % 5}", arguments="{}")
                    for n in range(calls_per_turn)
                ]
            )
            for t in range(turns)
        ]
        self.replies.append(ModelResponse(text="done", finish_reason="stop"))
        self.asked_at: list[float] = []

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        self.asked_at.append(time.perf_counter())
        return self.replies[len(self.asked_at) - 1]


def _agent(workspace: Path, provider: Replay, *, async_tools: bool, turns: int) -> Agent:
    plugin = NoopPlugin(5, async_tools=async_tools)
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("noop", plugin)])
    return Agent(provider=provider, plugin_manager=pm, workspace=workspace, max_turns=turns + 1)


def baseline(calls: int, *, async_tools: bool) -> float:
    """Milliseconds per call of awaiting (or calling) the tool function directly."""
    args = NoArgs()

    async def direct() -> float:
        started = time.perf_counter()
        if async_tools:
            for _ in range(calls):
                await _async_noop(args)
        else:
            for _ in range(calls):
                _sync_noop(args)
        return time.perf_counter() - started

    return asyncio.run(direct()) * 1000 / calls


def through_the_loop(turns: int, calls_per_turn: int, *, async_tools: bool, runs: int = 1) -> float:
    """Milliseconds per call for ``runs`` concurrent runs (one agent, a session each)."""
    with TemporaryDirectory() as tmp:
        providers = [Replay(turns, calls_per_turn) for _ in range(runs)]
        agent = _agent(Path(tmp), providers[0], async_tools=async_tools, turns=turns)

        async def all_runs() -> float:
            sessions = [agent.new_session(provider=p) for p in providers]
            started = time.perf_counter()
            results = await asyncio.gather(*(agent.run("go", session=s) for s in sessions))
            elapsed = time.perf_counter() - started
            assert all(r.outcome == "completed" for r in results), results[0].reason
            return elapsed

        elapsed = asyncio.run(all_runs())
    return elapsed * 1000 / (turns * calls_per_turn * runs)


def history_growth(turns: int = 5000, window: int = 500) -> tuple[float, float, float]:
    """Mean milliseconds per turn over the first and the last ``window`` turns, and their ratio."""
    with TemporaryDirectory() as tmp:
        provider = Replay(turns, 1)
        agent = _agent(Path(tmp), provider, async_tools=True, turns=turns)
        result = asyncio.run(agent.run("go"))
    assert result.outcome == "completed", result.reason
    gaps = [b - a for a, b in zip(provider.asked_at, provider.asked_at[1:], strict=False)]
    first = statistics.mean(gaps[100 : 100 + window]) * 1000  # past the first turns' warm-up
    last = statistics.mean(gaps[-window:]) * 1000
    return first, last, last / first


def prompt_build(tools: int = 100, repeat: int = 50) -> float:
    """Median milliseconds to build the system prompt for a session with ``tools`` tools."""
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("noop", NoopPlugin(tools))])
    catalog = pm.catalog()
    names = catalog.tool_names(["noop"])
    session = neta.SessionContext(workspace=Path.cwd())
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        build_system_prompt(catalog=catalog, tool_names=names[: tools // 2], session=session)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def plugin_manager_build(repeat: int = 30) -> tuple[float, float]:
    """Median milliseconds to build a plugin manager with the installed plugins.

    As an ``Agent`` given none does: reading the entry points each time (``plugins._remembered``
    emptied first, as every build did before discovery was remembered), then remembered.
    """
    from neta import plugins

    neta.create_plugin_manager()  # the plugins' modules are imported once, for both
    samples: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(repeat):
        for remembered in (False, True):
            if not remembered:
                plugins._remembered.clear()
            started = time.perf_counter()
            neta.create_plugin_manager()
            samples[remembered].append((time.perf_counter() - started) * 1000)
    return statistics.median(samples[False]), statistics.median(samples[True])


def _best(measure: Callable[[], float]) -> float:
    return min(measure() for _ in range(REPEAT))


TRACED_WORKLOAD = ("one async call per turn (1,000 turns)", 1000, 1, 1)
TRACING_REPEAT = 10


def _loop_overhead(turns: int, per_turn: int, runs: int, direct: float) -> float:
    gc.collect()  # what an earlier measurement left behind is not collected during this one
    return through_the_loop(turns, per_turn, async_tools=True, runs=runs) - direct


def tracing_overhead() -> list[tuple[str, float]]:
    """Overhead per call with tracing off and on (best of ``TRACING_REPEAT``), in order.

    The baseline is measured first, while nothing has imported OpenTelemetry; the others are
    interleaved, so that the machine's drift touches them alike.
    """
    _, turns, per_turn, runs = TRACED_WORKLOAD
    direct = _best(lambda: baseline(turns * per_turn * runs, async_tools=True))
    assert not any(name.startswith("opentelemetry") for name in sys.modules)
    off = min(_loop_overhead(turns, per_turn, runs, direct) for _ in range(TRACING_REPEAT))

    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropped(SpanExporter):
        def export(self, spans: object) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(BatchSpanProcessor(Dropped()))
    trace.set_tracer_provider(provider)
    settings: dict[str, bool | None] = {"off": None, "on": False, "on, content": True}
    samples: dict[str, list[float]] = {name: [] for name in settings}
    for _ in range(TRACING_REPEAT):
        for name, content in settings.items():
            if content is None:
                neta.tracing.disable()
            else:
                neta.tracing.enable(provider, capture_content=content)
            samples[name].append(_loop_overhead(turns, per_turn, runs, direct))
    neta.tracing.disable()
    provider.shutdown()
    return [
        ("off, nothing of OpenTelemetry loaded (baseline)", off),
        ("off, an SDK provider set globally", min(samples["off"])),
        ("on: SDK provider, batched, spans dropped", min(samples["on"])),
        ("on, content recorded", min(samples["on, content"])),
    ]


WORKLOADS: Sequence[tuple[str, int, int, int]] = (
    # label, turns, calls per turn, concurrent runs
    ("one call per turn (1,000 turns)", 1000, 1, 1),
    ("50 calls in one turn (x20 turns)", 20, 50, 1),
    ("100 concurrent runs (10 turns each)", 10, 1, 100),
)


def main() -> None:
    """Print each measurement."""
    print(f"{'workload':<38} {'tool':<6} {'loop':>9} {'baseline':>9} {'overhead':>9}")
    worst_async = 0.0
    for label, turns, per_turn, runs in WORKLOADS:
        for async_tools in (True, False):
            calls = turns * per_turn * runs
            base = _best(lambda a=async_tools, c=calls: baseline(c, async_tools=a))
            loop = _best(
                lambda a=async_tools, t=turns, p=per_turn, r=runs: through_the_loop(
                    t, p, async_tools=a, runs=r
                )
            )
            overhead = loop - base
            if async_tools:
                worst_async = max(worst_async, overhead)
            kind = "async" if async_tools else "sync"
            print(f"{label:<38} {kind:<6} {loop:>6.3f} ms {base:>6.3f} ms {overhead:>6.3f} ms")
    verdict = "met" if worst_async <= GOAL_MS else "NOT met"
    print(f"worst overhead per async call: {worst_async:.3f} ms (goal <= {GOAL_MS} ms: {verdict})")
    first, last, growth = history_growth()
    print(
        f"history, 5,000 turns of one async call: {first:.3f} ms per turn over turns 100-600, "
        f"{last:.3f} ms over the last 500: growth factor {growth:.2f} (linear: about 1)"
    )
    print(f"system prompt build, 100 registered tools (50 offered): {prompt_build():.3f} ms")
    scanned, remembered = plugin_manager_build()
    print(
        f"plugin manager with the installed plugins: {scanned:.2f} ms reading the entry points, "
        f"{remembered:.2f} ms with them remembered ({scanned / remembered:.1f}x)"
    )
    print(f"tracing, {TRACED_WORKLOAD[0]}: overhead per call")
    measured = tracing_overhead()
    _, base_overhead = measured[0]
    for label, overhead in measured:
        print(f"  {label:<50} {overhead:>6.3f} ms  x{overhead / base_overhead:.2f}")


if __name__ == "__main__":
    main()
