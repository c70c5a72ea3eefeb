"""Where the run keeps its throwaway files: in memory, when the machine has room for them.

The suite writes and deletes thousands of files: a folder per test, SQLite databases, a
PostgreSQL cluster (a copy of its template per test database), Chromium profiles. On a disk
each of those goes through the filesystem's journal. On a two-core machine the kernel's share
of the run was about a sixth of its CPU, 20 to 26 s; with the same files in a tmpfs it was 15
or 16 s, and the run 2 to 7 s shorter. The files are as real there; only where the kernel keeps
them changes.

The controller decides once, before any worker starts, and points ``TMPDIR`` at the folder:
pytest's ``tmp_path`` (unless ``--basetemp`` names another folder), :mod:`tempfile` and the
processes the tests start all follow it. A ``TMPDIR`` the user set is kept, and so is the usual
folder when there is no tmpfs with room (a container's default ``/dev/shm`` holds 64 MB).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import MutableMapping
from pathlib import Path

SHM = Path("/dev/shm")

FOLDER = "neta-tests-{uid}"
"""The folder made in the tmpfs, one per user: pytest keeps its last three runs' folders in it
(``pytest-of-<user>/pytest-N``) and removes older ones, as it does in the usual temp folder."""

MIN_FREE_BYTES = 2 << 30
"""The room the tmpfs must have: a run holds a few hundred MB at its peak."""


def filesystem(path: Path) -> str:
    """The type of the filesystem holding ``path`` (``tmpfs``, ``ext4``...), from the mount
    table: the mount point that is the longest prefix of its resolved path (of two on the same
    point, the later, which hides the earlier)."""
    resolved = path.resolve()
    found, longest = "", -1
    for line in Path("/proc/self/mounts").read_text().splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = Path(fields[1].replace("\\040", " "))
        if resolved.is_relative_to(point) and len(point.parts) >= longest:
            found, longest = fields[2], len(point.parts)
    return found


def memory_tmpdir(environ: MutableMapping[str, str], shm: Path = SHM) -> Path | None:
    """The folder in the tmpfs ``shm`` for this run's temporary files, made if need be; None
    when the user set ``TMPDIR``, when ``shm`` is no tmpfs or has too little room, or when the
    folder there is not safely this user's own (another user made it, or it is a link)."""
    if environ.get("TMPDIR"):
        return None
    try:
        if filesystem(shm) != "tmpfs":
            return None
        room = os.statvfs(shm)
        if room.f_bavail * room.f_frsize < MIN_FREE_BYTES:
            return None
        folder = shm / FOLDER.format(uid=os.getuid())
        with contextlib.suppress(FileExistsError):
            # others may pass through (PostgreSQL runs as another user) but not list it
            folder.mkdir(mode=0o711)
            folder.chmod(0o711)  # mkdir's mode is cut by the umask
        mode = folder.lstat()
    except OSError:
        return None
    owned = stat.S_ISDIR(mode.st_mode) and mode.st_uid == os.getuid()
    if not owned or stat.S_IMODE(mode.st_mode) & 0o022:
        return None
    return folder


def use(folder: Path, environ: MutableMapping[str, str]) -> None:
    """Point ``TMPDIR`` at ``folder``, and :mod:`tempfile` too, which caches its choice."""
    environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None
