"""Keep the cycle collector off the objects a ``neta`` process makes while it starts.

Starting a command imports hundreds of modules and builds thousands of classes and schemas
(pydantic, FastAPI, a model SDK, the MCP SDK) that live until the process ends. Every full
collection walks them all again looking for reference cycles, and the interpreter runs such
collections as it exits: a tenth of a second of CPU or more for a server, paid by every start.
Once a command has started, :func:`freeze_startup_objects` moves what is alive into the
collector's permanent generation (``gc.freeze``), so later collections, those at exit included,
look only at what the command makes from then on; whatever drops its last reference is still
freed at once.

The collector belongs to the whole process, so only a process that is the ``neta`` command
(or one of its server workers) does this, after :func:`own_process`: ``main`` called from
Python (a test, a host) leaves the caller's collector alone.
"""

from __future__ import annotations

import gc

_owned = False


def own_process() -> None:
    """Mark this process as the ``neta`` command's own (the script, ``python -m neta``)."""
    global _owned
    _owned = True


def freeze_startup_objects() -> None:
    """Leave every object alive now out of later collections, in a process of our own."""
    if _owned:
        gc.freeze()
