"""Runtime overhead: loop cost per tool call, and system prompt build time with 100 tools.

Run: python bench/runtime_bench.py   (prints milliseconds; targets: < 1 ms per tool call)
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from pydantic import BaseModel

import neta
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from neta.runtime.prompt_builder import build_system_prompt


class NoArgs(BaseModel):
    """No arguments."""


async def _async_noop(args: NoArgs) -> str:
    return "ok"


class NoopPlugin:
    """``count`` no-op tools, each with guidance and a when-to-use line.

    Plain-function tools run in a worker thread; ``async_tools`` makes them coroutines.
    """

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
        execute = _async_noop if self.async_tools else (lambda a: "ok")
        return [neta.Tool(name=f"noop_{i}", execute=execute) for i in range(self.count)]


def loop_overhead(turns: int = 200, calls_per_turn: int = 5, *, async_tools: bool = False) -> float:
    """Milliseconds per tool call for a scripted run of no-op calls."""
    plugin = NoopPlugin(5, async_tools=async_tools)
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("noop", plugin)])
    script = [
        {"tool_calls": [{"name": f"noop_{i}", "arguments": {}} for i in range(calls_per_turn)]}
        for _ in range(turns)
    ] + [{"text": "done"}]
    with TemporaryDirectory() as tmp:
        agent = Agent(
            provider=ScriptedProvider(script),
            plugin_manager=pm,
            workspace=Path(tmp),
            max_turns=turns + 1,
        )
        started = time.perf_counter()
        result = asyncio.run(agent.run("go"))
        elapsed = time.perf_counter() - started
    assert result.outcome == "completed", result.reason
    return elapsed * 1000 / (turns * calls_per_turn)


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


def main() -> None:
    """Print each measurement."""
    per_call = min(loop_overhead() for _ in range(3))
    print(f"loop overhead per tool call (scripted, no-op tool): {per_call:.3f} ms  (target < 1 ms)")
    per_call = min(loop_overhead(async_tools=True) for _ in range(3))
    print(f"  the same with an async no-op tool (no worker thread): {per_call:.3f} ms")
    print(f"system prompt build, 100 registered tools (50 offered): {prompt_build():.3f} ms")


if __name__ == "__main__":
    main()
