"""The worker threads plain-function tools run in: reused, bounded, harmless when idle."""

import asyncio
import threading
import time

import neta
import neta.tools
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from neta.tool_threads import BUSY_NAME, IDLE_NAME, MAX_IDLE, ToolThreads
from tests.core.runtime import kit


def kit_agent(tmp_path, turns):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    return Agent(provider=ScriptedProvider(turns), plugin_manager=pm, workspace=tmp_path)


def wait_until(condition, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_plain_function_calls_one_after_another_reuse_one_worker_thread(tmp_path, monkeypatch):
    # the process's pool may hold idle workers of earlier tests, and any of them may take a
    # call: with a pool of its own, only the worker that ran a call and, if the next call came
    # before it was idle again, a second one can
    pool = ToolThreads(idle_seconds=2)
    monkeypatch.setattr(neta.tools, "TOOL_THREADS", pool)
    kit.RAN_IN.clear()
    turns = [{"tool_calls": [{"name": "whoami", "arguments": {}}]} for _ in range(20)]
    result = asyncio.run(kit_agent(tmp_path, [*turns, {"text": "done"}]).run("go"))
    assert result.outcome == "completed"
    assert len(kit.RAN_IN) == 20
    assert len({id(thread) for thread in kit.RAN_IN}) <= 2
    assert all(thread.daemon for thread in kit.RAN_IN)
    assert {e.content for e in result.events if e.type == "tool_result"} == {BUSY_NAME}
    # its workers end: a later test counting the process's idle workers does not see them
    wait_until(lambda: pool.idle == 0 and not any(t.is_alive() for t in kit.RAN_IN))


def test_after_five_timed_out_calls_no_worker_stays_busy_and_idle_ones_are_bounded(tmp_path):
    calls = [{"name": "blocking", "arguments": {"seconds": 0.5, "label": str(n)}} for n in range(5)]
    turns = [{"tool_calls": [call]} for call in calls]
    result = asyncio.run(kit_agent(tmp_path, [*turns, {"text": "done"}]).run("go"))
    timed_out = [e for e in result.events if e.type == "tool_result" and "timed out" in e.content]
    assert len(timed_out) == 5

    def workers(name):
        return [t for t in threading.enumerate() if t.name == name]

    wait_until(lambda: not workers(BUSY_NAME))
    assert len(workers(IDLE_NAME)) <= MAX_IDLE
    assert all(t.daemon for t in workers(IDLE_NAME))


def test_all_workers_busy_starts_another_so_a_stuck_call_never_starves_the_rest():
    threads = ToolThreads(max_idle=1, idle_seconds=5)
    release = threading.Event()
    started = []

    def job():
        started.append(threading.current_thread())
        release.wait(5)

    for _ in range(3):
        threads.submit(job)
    wait_until(lambda: len(started) == 3)
    assert len(set(started)) == 3
    release.set()
    wait_until(lambda: threads.idle == 1 and sum(t.is_alive() for t in started) == 1)


def test_an_idle_worker_ends_after_its_idle_time():
    threads = ToolThreads(max_idle=2, idle_seconds=0.1)
    ran = []
    threads.submit(lambda: ran.append(threading.current_thread()))
    wait_until(lambda: bool(ran))
    wait_until(lambda: not ran[0].is_alive())
    assert threads.idle == 0


def test_work_handed_to_an_idle_worker_runs_in_that_worker():
    threads = ToolThreads(max_idle=1, idle_seconds=5)
    ran = []
    threads.submit(lambda: ran.append(threading.current_thread()))
    wait_until(lambda: threads.idle == 1)
    threads.submit(lambda: ran.append(threading.current_thread()))
    wait_until(lambda: len(ran) == 2)
    assert ran[0] is ran[1]
