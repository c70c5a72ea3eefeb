"""``HostMetrics``: what a host's runs, model calls, tools, store and bus did, for Prometheus.

Each hub has its own registry (several apps in one process do not share their numbers). The
metrics are fed from three places: every event of every run (``watch_run``, called by the hub
for each run it starts, whose observer ``run_live`` gives each event), each model call of a
session's provider (``model_call``) and each failed call of the hub's store and bus
(``store_failed``, ``bus_failed``), both reported by the wrappers of ``neta.hosting.metered``.
Gauges are read from the hub when asked (``sessions``, ``questions``).

Labels hold only bounded, harmless values: outcomes, tool names the server offers (a name a
model made up counts as ``unknown``), a retry's kind, ``store`` or ``bus``. Never a session
id, a text, a path or a URL.

Several worker processes (``neta serve --workers N``) share one set of numbers through
prometheus-client's multiprocess mode: ``neta serve`` gives the workers a private directory
(``shared_metrics_directory``) where each writes its own, and whichever worker answers
``/metrics`` adds them all up. Gauges are then each worker's as of its last refresh (every few
seconds, at each run event and at each scrape), summed over the workers that are alive.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client import multiprocess as _multiprocess
from prometheus_client import values as _values

from neta.events import (
    ApprovalRequested,
    ClarifyRequest,
    ProviderRetry,
    RunFinished,
    RunStarted,
    ToolResultEvent,
)

MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
"""Where the worker processes of one server keep their metrics (prometheus-client's name)."""

REFRESH_SECONDS = 5.0
"""How often a worker of several refreshes its gauges for the others to read."""

RUN_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800)
"""Run durations (seconds; a run may wait minutes on its questions)."""

MODEL_CALL_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300)
"""Model call durations (seconds)."""

_RETRY_KINDS = (
    ("rate limited", "rate_limited"),
    ("overloaded", "overloaded"),
    ("server error", "server_error"),
)


class HostMetrics:
    """The metrics of one hub.

    Args:
        sessions: how many sessions the hub holds in memory now.
        questions: how many questions and approvals wait for an answer now.
    """

    def __init__(self, *, sessions: Callable[[], int], questions: Callable[[], int]) -> None:
        self._sessions = sessions
        self._questions = questions
        self.directory = _shared_directory()
        self.registry = CollectorRegistry()
        registry = self.registry
        self.runs_started = Counter("neta_runs_started", "Runs started.", registry=registry)
        self.runs_finished = Counter(
            "neta_runs_finished", "Runs ended, by outcome.", ["outcome"], registry=registry
        )
        self.run_seconds = Histogram(
            "neta_run_duration_seconds",
            "From a run's start until its end is saved, by outcome.",
            ["outcome"],
            buckets=RUN_BUCKETS,
            registry=registry,
        )
        self.model_call_seconds = Histogram(
            "neta_model_call_duration_seconds",
            "Model requests (each try), by outcome: ok or error.",
            ["outcome"],
            buckets=MODEL_CALL_BUCKETS,
            registry=registry,
        )
        self.tool_calls = Counter(
            "neta_tool_calls",
            "Tool calls that returned, by tool and outcome: ok or error.",
            ["tool", "outcome"],
            registry=registry,
        )
        self.provider_retries = Counter(
            "neta_provider_retries",
            "Model requests tried again, by kind.",
            ["kind"],
            registry=registry,
        )
        self.storage_errors = Counter(
            "neta_storage_errors",
            "Calls to the store or the bus that failed.",
            ["part"],
            registry=registry,
        )
        self.pending_questions = Gauge(
            "neta_pending_questions",
            "Questions and approvals waiting for an answer.",
            registry=registry,
            multiprocess_mode="livesum",
        )
        self.sessions_live = Gauge(
            "neta_sessions_live",
            "Sessions in memory: running, with a client, or kept idle.",
            registry=registry,
            multiprocess_mode="livesum",
        )
        for part in ("store", "bus"):
            self.storage_errors.labels(part)  # shown as 0 until one fails
        self._tools: set[str] = set()
        if self.directory is None:
            self.pending_questions.set_function(lambda: float(self._questions()))
            self.sessions_live.set_function(lambda: float(self._sessions()))
            ProcessCollector(registry=registry)  # memory, CPU, open files of this process
        else:
            _start_refreshing(self)

    def watch_run(self) -> Callable[[Any], None]:
        """Count a run that starts now; what its events tell is counted by what this returns."""
        self.runs_started.inc()
        started = time.monotonic()

        def observe(event: Any) -> None:
            if isinstance(event, ToolResultEvent):
                tool = event.name if event.name in self._tools else "unknown"
                self.tool_calls.labels(tool, "error" if event.is_error else "ok").inc()
            elif isinstance(event, RunStarted):
                self._tools.update(event.tools)
            elif isinstance(event, ProviderRetry):
                self.provider_retries.labels(_retry_kind(event.reason)).inc()
            elif isinstance(event, RunFinished) and event.agent_id is None:
                self.runs_finished.labels(event.outcome).inc()
                self.run_seconds.labels(event.outcome).observe(time.monotonic() - started)
            if self.directory is not None and isinstance(event, _CHANGING_GAUGES):
                self.refresh()

        return observe

    def model_call(self, seconds: float, *, failed: bool) -> None:
        """Count one model request that took ``seconds``."""
        self.model_call_seconds.labels("error" if failed else "ok").observe(seconds)

    def store_failed(self) -> None:
        """Count one failed call of the store."""
        self.storage_errors.labels("store").inc()

    def bus_failed(self) -> None:
        """Count one failed call of the bus."""
        self.storage_errors.labels("bus").inc()

    def refresh(self) -> None:
        """Set the gauges from the hub (where they are not read at each scrape)."""
        self.pending_questions.set(self._questions())
        self.sessions_live.set(self._sessions())

    def exposition(self) -> tuple[bytes, str]:
        """The metrics in Prometheus' text format, and its content type.

        With several workers, every live worker's numbers added up (and the gauges of the
        workers that died forgotten).
        """
        if self.directory is None:
            return generate_latest(self.registry), CONTENT_TYPE_LATEST
        self.refresh()
        _forget_dead_workers(self.directory)
        merged = CollectorRegistry()
        _multiprocess.MultiProcessCollector(merged, path=self.directory)  # type: ignore[no-untyped-call]
        return generate_latest(merged), CONTENT_TYPE_LATEST


_CHANGING_GAUGES = (RunStarted, RunFinished, ClarifyRequest, ApprovalRequested)
"""Events after which a worker of several refreshes its gauges."""


def _shared_directory() -> str | None:
    """The directory of the metrics shared by several workers, when this process writes there.

    prometheus-client decides once, when it is imported, whether it writes there.
    """
    if _values.ValueClass is _values.MutexValue:
        return None
    return os.environ.get(MULTIPROCESS_VARIABLE) or None


def _retry_kind(reason: str) -> str:
    for prefix, kind in _RETRY_KINDS:
        if reason.startswith(prefix):
            return kind
    return "other"


def _start_refreshing(metrics: HostMetrics) -> None:
    """Refresh ``metrics``' gauges every ``REFRESH_SECONDS`` while it is in use."""
    held = weakref.ref(metrics)

    def refresh() -> None:
        while True:
            time.sleep(REFRESH_SECONDS)
            alive = held()
            if alive is None:
                return
            alive.refresh()
            del alive

    threading.Thread(target=refresh, name="neta-metrics", daemon=True).start()


def _forget_dead_workers(directory: str) -> None:
    """Drop the gauges of worker processes that are gone (their counts stay in the totals)."""
    for path in Path(directory).glob("gauge_live*_*.db"):
        pid = path.stem.rpartition("_")[2]
        if pid.isdigit() and not _alive(int(pid)):
            _multiprocess.mark_process_dead(int(pid), directory)  # type: ignore[no-untyped-call]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def shared_metrics_directory() -> Iterator[str]:
    """A private directory for the metrics of the worker processes started meanwhile.

    It is set as ``PROMETHEUS_MULTIPROC_DIR`` (the workers inherit it) and removed at the end.
    """
    directory = tempfile.mkdtemp(prefix="neta-metrics-")
    previous = os.environ.get(MULTIPROCESS_VARIABLE)
    os.environ[MULTIPROCESS_VARIABLE] = directory
    try:
        yield directory
    finally:
        if previous is None:
            os.environ.pop(MULTIPROCESS_VARIABLE, None)
        else:
            os.environ[MULTIPROCESS_VARIABLE] = previous
        shutil.rmtree(directory, ignore_errors=True)
