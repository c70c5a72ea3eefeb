"""bash: processes a session starts, escapes included, are killed when it ends or is cancelled.

These are the sessions of a host that chose ``--sandbox off`` (a sandboxed call's processes
die with its namespace when the call ends: ``test_bash_sandbox``).

The escapes are the usual ones: ``setsid`` (a new session, so the process group kill misses
it), ``nohup ... &`` and a double fork (re-parented to init).
"""

import asyncio
import contextlib
import time

import pytest

import neta
import neta_base.plugin
from neta_base import bash
from tests.processes import alive, wait_gone

ESCAPES = (
    "setsid sh -c 'echo $$ > p1; exec sleep 300' > /dev/null 2>&1 < /dev/null &\n"
    "nohup sh -c 'echo $$ > p2; exec sleep 300' > /dev/null 2>&1 &\n"
    "( ( sh -c 'echo $$ > p3; exec sleep 300' > /dev/null 2>&1 & ) & )\n"
    "setsid sh -c '( sh -c \"echo \\$\\$ > p4; exec sleep 300\" & )' > /dev/null 2>&1 &\n"
)


def escaped_pids(workspace, names=("p1", "p2", "p3", "p4")):
    """Wait until each escape wrote its pid, and return them (all alive at that point)."""
    deadline = time.monotonic() + 5
    files = [workspace / name for name in names]
    while time.monotonic() < deadline and not all(
        f.exists() and f.read_text().strip() for f in files
    ):
        time.sleep(0.02)
    pids = [int(f.read_text()) for f in files]
    assert all(alive(pid) for pid in pids), "an escape died before the check"
    return pids


@pytest.fixture
def session(session):
    """The shared ``session``, unsandboxed."""
    session.sandbox = neta.SandboxPolicy(enabled=False)
    return session


def run_bash(session, command, timeout=30):
    tool = bash.build(session)
    return asyncio.run(tool.invoke(bash.BashArgs(command=command, timeout=timeout)))


def test_session_end_kills_setsid_nohup_and_double_forked_processes(make_pm, session):
    pm = make_pm(base=neta_base.plugin)
    pm.notify("neta_session_start", session=session)
    result = run_bash(session, ESCAPES + "echo started")
    assert result.content.startswith("started")
    pids = escaped_pids(session.workspace)
    pm.notify("neta_session_end", session=session)
    assert pm.problems == []
    assert wait_gone(pids, 3.0) == []


def test_session_end_leaves_other_sessions_processes_alone(make_pm, session, tmp_path):
    pm = make_pm(base=neta_base.plugin)
    other_workspace = tmp_path / "other"
    other_workspace.mkdir()
    other = neta.SessionContext(
        workspace=other_workspace, sandbox=neta.SandboxPolicy(enabled=False)
    )
    run_bash(other, "setsid sh -c 'echo $$ > p1; exec sleep 300' > /dev/null 2>&1 &")
    survivor = escaped_pids(other_workspace, ("p1",))
    run_bash(session, ESCAPES)
    pids = escaped_pids(session.workspace)
    try:
        pm.notify("neta_session_end", session=session)
        assert wait_gone(pids, 3.0) == []
        assert all(alive(pid) for pid in survivor)
    finally:
        pm.notify("neta_session_end", session=other)
    assert wait_gone(survivor, 3.0) == []


def test_timed_out_call_kills_its_setsid_escapes_too(session):
    result = run_bash(session, ESCAPES + "sleep 30", timeout=1)
    assert result.data["timed_out"] is True
    assert wait_gone(escaped_pids_if_any(session.workspace), 3.0) == []


def escaped_pids_if_any(workspace):
    return [int(f.read_text()) for f in sorted(workspace.glob("p[0-9]")) if f.read_text().strip()]


class StallsAfterScript:
    """Replays ``turns``, then never answers: a run is cancelled while it waits on the model."""

    def __init__(self, turns, waiting):
        self.script = neta.ScriptedProvider(turns)
        self.left = len(turns)
        self.waiting = waiting

    async def complete(self, request, on_text):
        if self.left:
            self.left -= 1
            return await self.script.complete(request, on_text)
        self.waiting.write_text("")
        await asyncio.sleep(60)
        raise AssertionError("not reached")


@contextlib.contextmanager
def cancelled_run(workspace, turns):
    """Run an agent with the ``base`` tools on ``turns`` and cancel it once it waits.

    Yields the pids the escapes wrote, before the session ends (it ends on leaving).
    """
    waiting = workspace / "waiting"
    model = StallsAfterScript(turns, waiting)
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("base", neta_base.plugin)])
    agent = neta.Agent(
        permissions="auto",
        provider=model,
        plugin_manager=pm,
        preset=["base"],
        workspace=workspace,
        sandbox="off",
    )
    session = agent.new_session()

    async def run_then_cancel():
        task = asyncio.create_task(agent.run("go", session=session))
        while not waiting.exists():
            await asyncio.sleep(0.02)
        pids = escaped_pids(workspace)  # all alive before the cancel
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return pids

    try:
        yield asyncio.run(run_then_cancel())
    finally:
        agent.end_session(session)


def start_escapes():
    return {"tool_calls": [{"name": "bash", "arguments": {"command": ESCAPES + "echo ok"}}]}


def test_cancelled_run_kills_escapes_while_a_bash_call_runs(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    long_call = {"name": "bash", "arguments": {"command": "touch waiting; sleep 60"}}
    with cancelled_run(workspace, [start_escapes(), {"tool_calls": [long_call]}]) as pids:
        assert wait_gone(pids, 3.0) == []


def test_cancelled_run_kills_escapes_while_it_waits_on_the_model(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with cancelled_run(workspace, [start_escapes()]) as pids:
        assert wait_gone(pids, 3.0) == []


def test_a_session_that_never_ran_a_command_ends_without_a_sweep(make_pm, session, monkeypatch):
    # Reading every process's environment costs milliseconds; a host ends many sessions.
    from neta_base import processes

    read = []
    real = processes._marked
    monkeypatch.setattr(processes, "_marked", lambda needle: read.append(needle) or real(needle))
    pm = make_pm(base=neta_base.plugin)
    pm.notify("neta_session_start", session=session)
    pm.notify("neta_run_end", session=session, outcome="cancelled")
    pm.notify("neta_session_end", session=session)
    assert read == []
    run_bash(session, "setsid sh -c 'echo $$ > p1; exec sleep 300' > /dev/null 2>&1 &")
    pid = escaped_pids(session.workspace, ("p1",))
    pm.notify("neta_session_end", session=session)
    assert pm.problems == []
    assert read != []
    assert wait_gone(pid, 3.0) == []
