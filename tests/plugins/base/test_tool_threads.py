"""A run whose file tool calls hit FIFOs and devices leaves no thread blocked behind it.

Those calls used to block in ``open()`` until the runtime's timeout abandoned them, and each
left a worker thread stuck forever. Now they are refused at once; whatever the runtime's
worker threads look like (one per call, or a small pool), none may still be inside a tool
once the run is over.
"""

import asyncio
import contextlib
import os
import sys
import threading
import time
from pathlib import Path

import pydantic

import neta
import neta_base
import neta_base.plugin

TOOL_CODE = (
    str(Path(neta_base.__file__).parent),
    str(Path(neta.__file__).parent / "paths.py"),
    str(Path(neta.__file__).parent / "fuzzy_match"),
)


def threads_in_tool_code():
    """Names of the threads whose stack is inside a tool's code right now."""
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    busy = []
    for ident, frame in sys._current_frames().items():
        while frame is not None:
            if frame.f_code.co_filename.startswith(TOOL_CODE):
                busy.append(names.get(ident, str(ident)))
                break
            frame = frame.f_back
    return busy


def test_run_with_five_calls_on_fifos_leaves_no_thread_inside_a_tool(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    pipes = [workspace / f"pipe{n}" for n in range(5)]
    for pipe in pipes:
        os.mkfifo(pipe)
    calls = [
        {"name": "read_file", "arguments": {"path": "pipe0"}},
        {"name": "write_file", "arguments": {"path": "pipe1", "content": "x\n"}},
        {"name": "patch", "arguments": {"path": "pipe2", "old_string": "a", "new_string": "b"}},
        {"name": "read_file", "arguments": {"path": "pipe3"}},
        {"name": "patch", "arguments": {"path": "pipe4", "old_string": "a", "new_string": "b"}},
    ]
    model = neta.ScriptedProvider([{"tool_calls": calls}, {"text": "done"}])
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("base", neta_base.plugin)])
    agent = neta.Agent(
        permissions="auto",
        provider=model,
        plugin_manager=pm,
        preset=["base"],
        workspace=workspace,
        tool_timeout=1.0,
    )
    try:
        result = asyncio.run(agent.run("read the pipes"))
        assert result.outcome == "completed"
        results = [e for e in result.events if getattr(e, "type", "") == "tool_result"]
        assert len(results) == 5
        # refused at once, each of them: none left to the timeout
        assert all("not a regular file" in e.content for e in results), results
        deadline = time.monotonic() + 20  # a thread blocked in open() never leaves
        while threads_in_tool_code() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert threads_in_tool_code() == []
    finally:
        for pipe in pipes:  # free any thread the old behaviour left blocked in open()
            with contextlib.suppress(OSError):
                os.close(os.open(pipe, os.O_RDWR | os.O_NONBLOCK))


def test_run_with_five_timed_out_calls_leaves_no_thread_inside_the_tool(tmp_path, make_pm):
    """Calls the runtime abandons at their timeout: their threads end once the work does."""
    inside = []

    class SlowArgs(pydantic.BaseModel):
        pass

    def slow(args):
        inside.append(threading.current_thread().name)
        try:
            time.sleep(0.5)
        finally:
            inside.remove(threading.current_thread().name)
        return "late"

    class SlowPlugin:
        @neta.hookimpl
        def neta_toolsets(self):
            return [neta.ToolsetSpec(name="slow", description="A slow tool.")]

        @neta.hookimpl
        def neta_tools(self):
            return [
                neta.ToolSchema(name="slow", toolset="slow", description="Slow.", args=SlowArgs)
            ]

        @neta.hookimpl
        def neta_build_tools(self, session):
            return [neta.Tool(name="slow", execute=slow)]

    calls = [{"name": "slow", "arguments": {}} for _ in range(5)]
    model = neta.ScriptedProvider([{"tool_calls": calls}, {"text": "done"}])
    agent = neta.Agent(
        permissions="auto",
        provider=model,
        plugin_manager=make_pm(slow=SlowPlugin()),
        preset=["slow"],
        workspace=tmp_path,
        tool_timeout=0.1,
    )
    result = asyncio.run(agent.run("be slow"))
    timed_out = [e for e in result.events if getattr(e, "type", "") == "tool_result"]
    assert len(timed_out) == 5
    assert all("timed out" in e.content for e in timed_out)
    deadline = time.monotonic() + 20  # each leaves half a second after it came in
    while inside and time.monotonic() < deadline:
        time.sleep(0.05)
    assert inside == []
