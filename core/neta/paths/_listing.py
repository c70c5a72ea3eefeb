"""Directories listed through a descriptor; entries reported, symlinks never followed."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from neta.errors import ToolError
from neta.paths._printable import printable
from neta.paths._walk import DIR_FLAGS, RootLike, lstat_at, open_dir_at, pinned


@dataclass(frozen=True)
class Entry:
    """One entry of a directory listing (symlinks are reported, never followed).

    Attributes:
        name: the entry's name.
        kind: ``"file"``, ``"dir"``, ``"symlink"`` or ``"other"`` (FIFOs, devices, sockets).
        target: what a symlink points to (``None`` for other kinds).
    """

    name: str
    kind: str
    target: str | None = None


class Directory:
    """A directory held open by descriptor; children are opened relative to it, never followed.

    Attributes:
        path: where it is (for messages).
    """

    def __init__(self, fd: int, path: Path) -> None:
        self._fd = fd
        self.path = path

    def entries(self) -> list[Entry]:
        """The entries, sorted by name."""
        found = []
        with os.scandir(self._fd) as scan:
            for item in scan:
                if item.is_symlink():
                    target = _readlink_or_none(item.name, self._fd)
                    found.append(Entry(item.name, "symlink", target))
                elif item.is_dir(follow_symlinks=False):
                    found.append(Entry(item.name, "dir"))
                elif item.is_file(follow_symlinks=False):
                    found.append(Entry(item.name, "file"))
                else:
                    found.append(Entry(item.name, "other"))
        return sorted(found, key=lambda entry: entry.name)

    @contextlib.contextmanager
    def child(self, name: str) -> Iterator[Directory]:
        """The subdirectory ``name`` (a symlink is refused, not followed)."""
        fd = os.open(name, DIR_FLAGS, dir_fd=self._fd)
        try:
            yield Directory(fd, self.path / name)
        finally:
            os.close(fd)


def _readlink_or_none(name: str, dir_fd: int) -> str | None:
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError:
        return None


@contextlib.contextmanager
def open_directory(path: str | os.PathLike[str], *, root: RootLike = None) -> Iterator[Directory]:
    """Open the directory ``path`` (symlinks inside the root followed by the walk).

    Raises:
        ToolError: missing, or not a directory.
        WorkspaceError: the path leads outside ``root``.
    """
    with pinned(root, path, follow_final=True) as spot:
        info = None if spot.missing else lstat_at(spot)
        if info is None:
            raise ToolError(f"{printable(spot.path)} does not exist")
        if not stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{printable(spot.path)} is not a directory")
        fd = open_dir_at(spot)
    try:
        yield Directory(fd, spot.path)
    finally:
        os.close(fd)
