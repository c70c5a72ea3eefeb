"""The worker threads plain-function tools run in: reused, bounded, harmless when idle."""

import asyncio
import gc
import threading
import time
import weakref

import pytest

import neta
import neta.tools
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from neta.tool_threads import BUSY_NAME, IDLE_NAME, MAX_IDLE, ToolThreads
from tests.core.runtime import kit


def kit_agent(tmp_path, turns):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    return Agent(
        permissions="auto", provider=ScriptedProvider(turns), plugin_manager=pm, workspace=tmp_path
    )


def wait_until(condition, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def slow_to_wait(monkeypatch):
    """Make every worker slow to wait for work again after a job, as on a loaded machine."""
    wait = ToolThreads._next

    def slowly(self):
        time.sleep(0.02)  # the caller's next job comes within a millisecond
        return wait(self)

    monkeypatch.setattr(ToolThreads, "_next", slowly)


def test_plain_function_calls_one_after_another_reuse_one_worker_thread(tmp_path, monkeypatch):
    # the process's pool may hold idle workers of earlier tests, and any of them may take a
    # call: in a pool of its own, the worker that ran a call is free again before the run hears
    # of its result, so it takes the next call too
    pool = ToolThreads(idle_seconds=1)
    monkeypatch.setattr(neta.tools, "TOOL_THREADS", pool)
    slow_to_wait(monkeypatch)
    kit.RAN_IN.clear()
    turns = [{"tool_calls": [{"name": "whoami", "arguments": {}}]} for _ in range(20)]
    try:
        result = asyncio.run(kit_agent(tmp_path, [*turns, {"text": "done"}]).run("go"))
        assert result.outcome == "completed"
        assert len(kit.RAN_IN) == 20
        assert len({id(thread) for thread in kit.RAN_IN}) == 1
        assert all(thread.daemon for thread in kit.RAN_IN)
        assert {e.content for e in result.events if e.type == "tool_result"} == {BUSY_NAME}
    finally:  # its workers end: the next test counts the process's idle workers
        deadline = time.monotonic() + 5
        while any(t.is_alive() for t in kit.RAN_IN) and time.monotonic() < deadline:
            time.sleep(0.01)


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


def test_then_runs_in_the_worker_once_it_is_free_so_a_job_submitted_there_reuses_it(
    monkeypatch,
):
    slow_to_wait(monkeypatch)
    threads = ToolThreads(max_idle=1, idle_seconds=5)
    ran, idle_in_then = [], []

    def then():
        idle_in_then.append(threads.idle)
        threads.submit(lambda: ran.append(threading.current_thread()))

    threads.submit(lambda: ran.append(threading.current_thread()), then=then)
    wait_until(lambda: len(ran) == 2)
    assert idle_in_then == [1]
    assert ran[0] is ran[1]


def test_a_then_that_raises_ends_its_worker_and_a_job_handed_to_it_runs_in_another(monkeypatch):
    raised = []
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_value))
    threads = ToolThreads(max_idle=1, idle_seconds=5)
    ran = []

    def then():
        threads.submit(lambda: ran.append(threading.current_thread()))  # handed to this worker
        raise RuntimeError("then failed")

    threads.submit(lambda: ran.append(threading.current_thread()), then=then)
    wait_until(lambda: len(ran) == 2 and threads.idle == 1)
    assert ran[0] is not ran[1]
    wait_until(lambda: not ran[0].is_alive())
    assert [str(exc) for exc in raised] == ["then failed"]
    # the second worker takes the next job; with nothing handed to it when its ``then``
    # fails, it stops counting as idle and ends
    threads.submit(lambda: None, then=lambda: 1 / 0)
    wait_until(lambda: len(raised) == 2 and not ran[1].is_alive())
    assert threads.idle == 0


def test_an_idle_worker_holds_nothing_of_the_first_call_it_ran():
    # a thread keeps what it was started with until it ends: the first call must not be that
    threads = ToolThreads(max_idle=1, idle_seconds=5)

    class Argument:
        pass

    argument = Argument()
    gone = weakref.ref(argument)
    threads.submit(lambda argument=argument: None)
    del argument
    wait_until(lambda: threads.idle == 1)
    gc.collect()
    assert gone() is None


def test_idle_workers_end_after_their_idle_time_even_after_bursts_of_jobs():
    # workers woken for a job another took first still end on time (a SimpleQueue's timed get
    # could wait for ever then, up to Python 3.12)
    threads = ToolThreads(max_idle=3, idle_seconds=0.001)
    for _ in range(20):
        until = time.monotonic() + 0.01

        def burst(until=until):
            while time.monotonic() < until:
                threads.submit(lambda: None)

        submitters = [threading.Thread(target=burst) for _ in range(2)]
        for submitter in submitters:
            submitter.start()
        for submitter in submitters:
            submitter.join()
        wait_until(lambda: threads.idle == 0, seconds=2)


def test_a_worker_that_will_not_wait_for_work_is_never_named_idle():
    names = []
    for max_idle in (0, 1):
        threads = ToolThreads(max_idle=max_idle, idle_seconds=5)
        threads.submit(lambda: None, then=lambda: names.append(threading.current_thread().name))
        wait_until(lambda max_idle=max_idle: len(names) == max_idle + 1)
    assert names == [BUSY_NAME, IDLE_NAME]


def test_a_pool_with_a_negative_bound_is_refused():
    with pytest.raises(ValueError, match="cannot be negative"):
        ToolThreads(idle_seconds=-1)
    with pytest.raises(ValueError, match="cannot be negative"):
        ToolThreads(max_idle=-1)


def test_a_plain_function_tool_raising_stop_iteration_ends_its_call_with_an_error():
    def ends(args):
        raise StopIteration("the iterator ran dry")

    tool = neta.Tool(name="ends", execute=ends)
    with pytest.raises(RuntimeError, match="the tool raised StopIteration: the iterator ran dry"):
        asyncio.run(asyncio.wait_for(tool.invoke(None), 5))
