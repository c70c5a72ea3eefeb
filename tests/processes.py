"""The processes a test started, read from ``/proc``: whether they run, what runs below them,
whether they are undumpable."""

from __future__ import annotations

import contextlib
import os
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


def observable_group() -> int | None:
    """The group to start a process in so that ``undumpable`` can tell: ``nogroup`` as root.

    As root, a process runs as root whether it is undumpable or not; in another group, it
    does not (its user is still root: it reads and runs what the tests' root does).
    """
    return 65534 if os.geteuid() == 0 else None


def undumpable(pid: int) -> bool:
    """Whether process ``pid`` is undumpable: its ``/proc`` files (its environment, its memory)
    then belong to root, whoever it runs as, and only a process with ``CAP_SYS_PTRACE`` may
    read them.

    Only a process that does not run as user and group root can tell (see
    ``observable_group``).
    """
    status = Path(f"/proc/{pid}/status").read_text()
    effective = tuple(
        int(line.split()[2]) for line in status.splitlines() if line.startswith(("Uid:", "Gid:"))
    )
    assert effective != (0, 0), f"process {pid} runs as root: its dumpability cannot be seen"
    owner = os.stat(f"/proc/{pid}/environ")
    return (owner.st_uid, owner.st_gid) == (0, 0)


def pool_workers(pid: int, count: int, seconds: float = 30.0) -> list[int]:
    """The ``count`` multiprocessing workers below ``pid`` (uvicorn's), once they all run."""
    deadline = time.monotonic() + seconds
    while True:
        found = []
        for child in descendants(pid):
            with contextlib.suppress(OSError):
                command = Path(f"/proc/{child}/cmdline").read_bytes()
                if b"spawn_main" in command and b"resource_tracker" not in command:
                    found.append(child)
        if len(found) >= count or time.monotonic() > deadline:
            assert len(found) == count, f"{len(found)} workers below {pid}, not {count}"
            return sorted(found)
        time.sleep(0.05)


def running_with(tag: str) -> list[int]:
    """The pids of every process whose command line holds ``tag``.

    A sandboxed command's own pids are its namespace's (``echo $$`` prints 2, say); the host
    finds its processes by something unique on their command line instead (``sleep 5.123``).
    """
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if tag.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
    return found


def wait_none_running_with(tag: str, seconds: float = 5.0) -> list[int]:
    """Wait up to ``seconds`` until no process's command line holds ``tag``; those that do."""
    deadline = time.monotonic() + seconds
    while running_with(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    return running_with(tag)


def becomes_undumpable(pid: int, seconds: float = 20.0) -> bool:
    """Whether process ``pid`` is undumpable within ``seconds`` (see ``undumpable``)."""
    deadline = time.monotonic() + seconds
    while not undumpable(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
