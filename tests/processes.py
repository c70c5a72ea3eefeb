"""Whether the processes a test started still run, read from ``/proc``."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie waiting to be reaped counts as gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


def wait_gone(pids: Iterable[int], seconds: float = 5.0) -> list[int]:
    """Wait up to ``seconds`` for every process of ``pids`` to end; those still running."""
    pids = list(pids)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.05)
    return [pid for pid in pids if alive(pid)]


def descendants(pid: int) -> list[int]:
    """The processes below ``pid``: its children, theirs, and so on."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError):
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
    found: list[int] = []
    pending = [pid]
    while pending:
        below = children.get(pending.pop(), [])
        found += below
        pending += below
    return found
