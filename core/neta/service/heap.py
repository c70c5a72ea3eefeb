"""Keeping the garbage collector's work small in a long-running server.

A server imports a great deal before it serves (the web framework, the model SDKs with their
hundreds of pydantic models, every plugin): tens of megabytes of objects that live as long as
the process. Every full collection walked all of them again, and under load the collector took
about a quarter of ``neta serve``'s CPU (``bench/gateway_bench.py``: some 2.5 ms of the 10 ms
a run cost). ``settle_heap`` collects once and freezes what start-up made (``gc.freeze``), so
that later collections skip it, and lets more objects be made between young collections, most
of them freed again by then (a turn's request, its events and frames).

Only ``neta serve`` calls it: the collector is the whole process's, and a host app that
embeds Neta decides for its own process.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000
"""Allocations (less deallocations) between collections of the youngest generation (700 by
default)."""


def settle_heap() -> None:
    """Collect, freeze the objects alive now out of later collections, and collect less often."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
