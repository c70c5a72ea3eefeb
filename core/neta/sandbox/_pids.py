"""A ``pids`` control group per sandboxed call, where the kernel ignores ``RLIMIT_NPROC``.

The kernel never applies ``RLIMIT_NPROC`` to processes of root (user id 0 of the first user
namespace), whatever capabilities they dropped, so a fork bomb run by a host that runs as
root would meet no bound. There, each call gets a fresh control group of the ``pids``
controller (cgroup v1 ``/sys/fs/cgroup/pids`` or v2 ``/sys/fs/cgroup``) with ``pids.max``
set; the call's first process joins it before it starts anything (a shell line in front of
``bwrap``), so everything the command forks is counted. A group is removed once the kernel
has emptied it: at once, or at the next call or the process's exit.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

_V1 = Path("/sys/fs/cgroup/pids")
_V2 = Path("/sys/fs/cgroup")
_LEFT: list[PidsGroup] = []  # released while the kernel was still emptying them


def pids_hierarchy() -> Path | None:
    """Where this process could make a ``pids`` group, or ``None``."""
    if (_V1 / "cgroup.procs").is_file() and os.access(_V1, os.W_OK):
        return _V1
    controllers = _V2 / "cgroup.subtree_control"
    with contextlib.suppress(OSError):
        if "pids" in controllers.read_text().split() and os.access(_V2, os.W_OK):
            return _V2
    return None


@dataclass(eq=False)
class PidsGroup:
    """One call's control group; ``join_argv`` puts the call's first process in it."""

    path: Path

    @classmethod
    def make(cls, hierarchy: Path, limit: int) -> PidsGroup | None:
        """A new group under ``hierarchy`` allowing ``limit`` processes, or ``None``."""
        _remove_emptied()
        path = hierarchy / f"neta-sandbox-{secrets.token_hex(6)}"
        try:
            path.mkdir()
            (path / "pids.max").write_text(str(limit))
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            return None
        return cls(path)

    def join_argv(self, argv: list[str]) -> list[str]:
        """``argv`` run by a shell that first moves itself into the group."""
        procs = str(self.path / "cgroup.procs")
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', procs, *argv]

    def try_remove(self) -> bool:
        """Remove the group if its processes are gone (they die with the sandbox's init)."""
        try:
            self.path.rmdir()
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return True

    def release(self) -> None:
        """Remove the group now, or, while the kernel still empties it, later."""
        if not self.try_remove():
            _LEFT.append(self)


def _remove_emptied() -> None:
    _LEFT[:] = [group for group in _LEFT if not group.try_remove()]


@atexit.register
def _remove_at_exit(seconds: float = 2.0) -> None:
    deadline = time.monotonic() + seconds
    while _LEFT and time.monotonic() < deadline:
        _remove_emptied()
        if _LEFT:
            time.sleep(0.01)
