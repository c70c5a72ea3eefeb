"""The ``base`` toolset built through the catalog for a session rooted at a temp workspace."""

import asyncio
import contextlib
import os
import threading

import pytest

import neta
import neta_base.plugin


@pytest.fixture
def base_tools(make_pm, session):
    """The session's ``base`` tools, as the runtime gets them (schema + instance)."""
    pm = make_pm(base=neta_base.plugin)
    tools = neta.build_session_tools(pm, session, ["base"])
    assert pm.problems == []
    return tools


@pytest.fixture
def unsandboxed(session):
    """``session`` with ``--sandbox off``: its commands run with the host's authority."""
    session.sandbox = neta.SandboxPolicy(enabled=False)
    return session


@pytest.fixture
def call(base_tools):
    """Validate ``args`` with the tool's schema and run it: ``call("read_file", path="x")``."""

    def run(name, **args):
        bound = base_tools[name]
        return asyncio.run(bound.tool.invoke(bound.schema.args.model_validate(args)))

    return run


@pytest.fixture
def fifo(session):
    """A FIFO ``pipe`` in the workspace with no writer; any opener left blocked is freed after."""
    path = session.workspace / "pipe"
    os.mkfifo(path)
    yield path
    # a tool that blocked opening it (the bug) is released, so no thread hangs past the test
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_RDWR | os.O_NONBLOCK))


@pytest.fixture
def quick():
    """Run ``function()`` in a daemon thread; fail if it is still blocked after ``seconds``.

    Opening a FIFO that has no other end blocks for ever: the limit only tells such a hang
    from an answer, however busy the machine, and fails before the test's own timeout would.
    Returns what it returned, or raises what it raised.
    """

    def run(function, seconds=20.0):
        outcome = {}

        def work():
            try:
                outcome["value"] = function()
            except BaseException as exc:
                outcome["error"] = exc

        worker = threading.Thread(target=work, daemon=True)
        worker.start()
        worker.join(seconds)
        assert not worker.is_alive(), f"still blocked after {seconds} s"
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    return run


PEAK_KIB = (
    "def peak_kib():\n"
    "    # VmHWM: this process's own peak RSS (ru_maxrss may carry the forking parent's over)\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            return int(line.split()[1])\n"
)
"""Source of ``peak_kib()`` for scripts run in a subprocess: its peak memory in KiB."""
