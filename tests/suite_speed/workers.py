"""How many xdist workers ``-n auto`` starts: three per core, at most eight.

A worker spends much of its time waiting (on a server, a subprocess, a timeout), not
computing, so two cores need several; but each worker costs CPU to start and to import its
share, and the more run at once, the more CPU the same work takes. With fewer tests starting
processes of their own, in fresh clones of the same commit taken in turns, six workers took
54.9 to 64.3 s (mean 58.8) and seven 60.9 to 65.3 s (mean 62.7), six being the faster in five
pairs of six; the CPU the run took fell by about 10 s with one worker fewer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

PER_CORE = 3
MOST = 8


def auto_count(numprocesses: object, environ: Mapping[str, str]) -> int | None:
    """The workers for ``-n auto``; None (xdist's own answer) for another ``-n`` or when
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` is set, which wins over this."""
    if environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or numprocesses != "auto":
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min(MOST, PER_CORE * (cores or 1))
