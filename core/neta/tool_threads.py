"""The worker threads plain-function tools run in: reused, never holding the process open.

Starting a thread per call costs more than many tools take. Workers are kept for reuse
instead, with two bounds: at most ``MAX_IDLE`` wait for work at any time (more are started
only while all are busy, e.g. held by calls that timed out but still run), and an idle one
ends after ``IDLE_SECONDS``. Every worker is a daemon thread; an idle one holds no reference to
any call and is named ``neta-tool-idle`` (``neta-tool`` while it runs one), so that a thread
still blocked in a tool is easy to tell from one waiting harmlessly for work. A worker counts
as free again before its caller hears that the call is done (``then`` of ``submit``), so calls
one after another run in one worker, even when the machine is too busy to run that worker
again before the next call comes.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

MAX_IDLE = 4
"""The most worker threads kept waiting for work."""

IDLE_SECONDS = 30.0
"""How long an idle worker waits for work before it ends."""

BUSY_NAME = "neta-tool"
"""The name of a worker while it runs a call."""

IDLE_NAME = "neta-tool-idle"
"""The name of a worker while it waits for work."""

Job = Callable[[], None]
_Task = tuple[Job, Job | None]


class ToolThreads:
    """A small set of reusable daemon threads for plain-function tool calls.

    Args:
        max_idle: the most workers kept waiting for work.
        idle_seconds: how long an idle worker waits before it ends.
    """

    def __init__(self, *, max_idle: int = MAX_IDLE, idle_seconds: float = IDLE_SECONDS) -> None:
        if max_idle < 0 or idle_seconds < 0:
            raise ValueError(
                f"max_idle ({max_idle}) and idle_seconds ({idle_seconds}) cannot be negative"
            )
        self.max_idle = max_idle
        self.idle_seconds = idle_seconds
        # not a SimpleQueue: up to Python 3.12 its get(timeout=...) can wait for ever when
        # another worker takes the job it was woken for, and the worker would never end
        self._jobs: queue.Queue[_Task] = queue.Queue()
        self._lock = threading.Lock()
        self._idle = 0

    @property
    def idle(self) -> int:
        """How many workers wait for work now."""
        return self._idle

    def submit(self, job: Job, then: Job | None = None) -> None:
        """Run ``job`` in a worker: an idle one when there is one, else a new one.

        ``then`` runs in the same worker after ``job``, once the worker counts as waiting for
        work again: whoever learns from ``then`` that the job is done (an event loop handed its
        result) and submits the next job at once finds this worker free, rather than starting
        another. Neither should raise; if ``then`` does, the worker ends, and a job handed to it
        meanwhile goes to a new one.
        """
        with self._lock:
            if self._idle > 0:
                self._idle -= 1
                self._jobs.put((job, then))  # under the lock: a worker leaving sees it (_next)
                return
        self._start((job, then))

    def _start(self, task: _Task) -> None:
        # handed in a list the worker empties: a thread keeps its arguments until it ends
        threading.Thread(target=self._work, args=([task],), name=BUSY_NAME, daemon=True).start()

    def _work(self, handed: list[_Task]) -> None:
        me = threading.current_thread()
        task: _Task | None = handed.pop()
        while task is not None:
            job, then = task
            task = None
            job()
            waits = self._wait_for_work()
            if waits:
                me.name = IDLE_NAME
            try:
                if then is not None:
                    then()
            except BaseException:
                if waits:
                    self._stop_waiting()
                raise
            finally:
                del job, then  # an idle worker keeps nothing of the call it ran
            task = self._next() if waits else None
            me.name = BUSY_NAME

    def _wait_for_work(self) -> bool:
        """Count this worker as waiting for work; ``False`` if enough do (it ends instead)."""
        with self._lock:
            if self._idle >= self.max_idle:
                return False
            self._idle += 1
            return True

    def _stop_waiting(self) -> None:
        """Stop counting this worker as waiting; a job already handed to it goes to a new one."""
        with self._lock:
            try:
                task = self._jobs.get_nowait()
            except queue.Empty:
                self._idle -= 1
                return
        self._start(task)

    def _next(self) -> _Task | None:
        """The next task for this waiting worker, or ``None`` when it should end."""
        try:
            return self._jobs.get(timeout=self.idle_seconds)
        except queue.Empty:
            with self._lock:
                try:  # a job handed to this worker just as it timed out
                    return self._jobs.get_nowait()
                except queue.Empty:
                    self._idle -= 1
                    return None


TOOL_THREADS = ToolThreads()
"""The process's worker threads for plain-function tools."""
