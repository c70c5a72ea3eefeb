"""Lease owner names, and telling when the process behind one is provably gone.

A server process names itself ``PID-TOKEN@PLACE``: its pid, a random token (a pid is reused),
and where its pid means something: the host name and a digest of the kernel's boot id and the
process's PID namespace. Another process in the same place reads the name and checks the pid:
when no process has it any more (or only a zombie does), the owner is dead, and its leases need
not be waited out. Elsewhere (another machine, container or boot) nothing can be proved, and
its leases lapse at their expiry. Without ``/proc`` a name has no place and is never provably
gone.
"""

from __future__ import annotations

import functools
import hashlib
import os
import secrets
import socket
from pathlib import Path


@functools.cache
def _place() -> str | None:
    """Where this process's pid means something, or ``None`` when that cannot be told."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    digest = hashlib.sha256(f"{boot}/{namespace}".encode()).hexdigest()[:12]
    return f"{socket.gethostname()}.{digest}"


def new_owner_name() -> str:
    """A lease owner name for this process, unique among every process that shares a store."""
    name = f"{os.getpid()}-{secrets.token_hex(6)}"
    place = _place()
    return name if place is None else f"{name}@{place}"


def owner_is_gone(owner: str, me: str) -> bool:
    """Whether the process named ``owner`` provably runs no more (``me`` is this process's name).

    Only a process of this place can be proved gone: its pid is free, or a zombie's.
    """
    pid_text, at, place = owner.partition("@")
    if not at or place != _place() or owner == me:
        return False
    try:
        pid = int(pid_text.split("-", 1)[0])
    except ValueError:
        return False
    return not _runs(pid)


def _runs(pid: int) -> bool:
    """Whether a process other than a zombie has ``pid`` (when in doubt, it does)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]
