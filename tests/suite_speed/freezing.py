"""Keep a test worker's cycle collector off what its earlier test modules left alive.

A worker imports the SDKs, FastAPI and the server, collects its tests and starts session
fixtures; nearly all of that lives until the worker ends. Every full collection walked it all
again: 4 s of CPU over the four workers of a run (2 s with this, its own collections counted).
After a module's last test (its module fixtures torn down) the worker collects once, then
freezes what is left (``gc.freeze``): later collections look only at what later tests make, and
still free it as before.

Collecting the tests is the same in small: the worker imports its share's modules and what they
import, nearly all of it kept to the end, and the collector kept passing over that growing heap
(``pytest --collect-only`` of the whole suite, in one process: 5.3 s of CPU, 3.8 s with the
collector paused). So the collector is paused while a process collects (``while_collecting``);
then it collects once and freezes what lives on.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def while_collecting() -> Iterator[None]:
    """Pause the collector for the block; then collect once and freeze what lives on."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()
        gc.freeze()


def after_test(module: Path, next_module: Path | None) -> bool:
    """Collect and freeze if that was the last test of ``module``; whether it did."""
    if next_module == module:
        return False
    gc.collect()
    gc.freeze()
    return True
