"""Keep the cycle collector off the objects a ``neta`` process makes while it starts.

Starting a command imports hundreds of modules and builds thousands of classes and schemas
(pydantic, FastAPI, a model SDK, the MCP SDK) that live until the process ends. Every full
collection walks them all again looking for reference cycles, and the interpreter runs such
collections as it exits: a tenth of a second of CPU or more for a server, paid by every start.
Once a command has started, :func:`freeze_startup_objects` moves what is alive into the
collector's permanent generation (``gc.freeze``), so later collections, those at exit included,
look only at what the command makes from then on; whatever drops its last reference is still
freed at once.

A server (``neta serve``, a worker of it) also collects once before it freezes, and collects
its youngest generation less often (``SERVER_YOUNG_THRESHOLD`` allocations apart): under load
the collector took a quarter of its CPU (``bench/gateway_bench.py``, 400 runs: 0.5 s in
collections after start-up before, 0.2 s after), most of it full collections walking the
imported SDKs, and most of what a turn allocates (its request, events and frames) is freed
before a young collection would look at it.

The collector belongs to the whole process, so only a process that is the ``neta`` command
(or one of its server workers) does this, after :func:`own_process`: ``main`` called from
Python (a test, a host) leaves the caller's collector alone.
"""

from __future__ import annotations

import gc

SERVER_YOUNG_THRESHOLD = 10_000
"""Allocations (less deallocations) between young collections in a server (700 by default)."""

_owned = False


def own_process() -> None:
    """Mark this process as the ``neta`` command's own (the script, ``python -m neta``)."""
    global _owned
    _owned = True


def freeze_startup_objects(*, serving: bool = False) -> None:
    """Leave every object alive now out of later collections, in a process of our own.

    ``serving``: the process is a long-running server: collect first, and collect the youngest
    generation less often from now on.
    """
    if not _owned:
        return
    if serving:
        gc.collect()
    gc.freeze()
    if serving:
        _, middle, old = gc.get_threshold()
        gc.set_threshold(SERVER_YOUNG_THRESHOLD, middle, old)
