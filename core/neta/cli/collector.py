"""Keep the cycle collector off the objects a ``neta`` process makes while it starts.

Starting a command imports hundreds of modules and builds thousands of classes and schemas
(pydantic, FastAPI, a model SDK, the MCP SDK) that live until the process ends. Every full
collection walks them all again looking for reference cycles, and the interpreter runs such
collections as it exits: a tenth of a second of CPU or more for a server, paid by every start.
Once a command has started, :func:`freeze_startup_objects` moves what is alive into the
collector's permanent generation (``gc.freeze``), so later collections, those at exit included,
look only at what the command makes from then on; whatever drops its last reference is still
freed at once.

A server (``neta serve``, a worker of it) also collects once before it freezes, so that no
garbage is frozen, and once after, so that the collector measures what a full collection is
due for against what the server makes from then on rather than against what it froze (it
waits for a quarter of that to be new). Its thresholds are Python's own
(``SERVER_THRESHOLDS``): a session the server drops from memory leaves reference cycles that
only the collector frees, mostly in its oldest generation, and with the youngest generation
collected ten times less often (as it was) full collections came so rarely that memory grew
with every session served (``bench/memory_bench.py``: 260 MiB after 2,000 sessions and still
growing, where it now stays at about 120 MiB, as with Python's own settings). What the raised
threshold saved in CPU was mostly that garbage left unfreed.

The collector belongs to the whole process, so only a process that is the ``neta`` command
(or one of its server workers) does this, after :func:`own_process`: ``main`` called from
Python (a test, a host) leaves the caller's collector alone.
"""

from __future__ import annotations

import gc

SERVER_THRESHOLDS = (700, 10, 10)
"""A server's collection thresholds (``gc.set_threshold``): Python's own."""

_owned = False


def own_process() -> None:
    """Mark this process as the ``neta`` command's own (the script, ``python -m neta``)."""
    global _owned
    _owned = True


def freeze_startup_objects(*, serving: bool = False) -> None:
    """Leave every object alive now out of later collections, in a process of our own.

    ``serving``: the process is a long-running server: collect before and after, and use
    ``SERVER_THRESHOLDS`` from now on.
    """
    if not _owned:
        return
    if serving:
        gc.collect()
    gc.freeze()
    if serving:
        gc.collect()  # walks only what is not frozen: next to nothing
        gc.set_threshold(*SERVER_THRESHOLDS)
