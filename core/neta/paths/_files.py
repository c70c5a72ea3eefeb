"""Files used through the walk's pinned directory: bounded reads, atomic replacement, removal."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from neta.errors import ToolError
from neta.paths._printable import printable
from neta.paths._walk import (
    CLOEXEC,
    FILE_FLAGS,
    RootLike,
    Spot,
    lstat_at,
    lstat_in,
    os_error,
    pinned,
)

HEAD_BYTES = 64 * 1024
"""How much of an existing file a write looks at (BOM, line endings) before replacing it."""

_KINDS = (
    (stat.S_ISLNK, "a symlink (it was swapped in meanwhile)"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


@dataclass(frozen=True)
class Written:
    """What ``replace_file`` did.

    Attributes:
        path: the file written (its real path).
        size: bytes written.
        created: whether the file did not exist before.
    """

    path: Path
    size: int
    created: bool


def resolve_in_workspace(root: RootLike, path: str | os.PathLike[str]) -> Path:
    """Resolve ``path`` to a real path inside ``root`` by the pinned walk (for showing it).

    Kept for plugins that name paths; to read or write, use ``read_bytes``, ``replace_file``
    or ``neta.read_text``/``neta.atomic_write`` with ``root=``, which resolve and use in one
    step (a path returned here can be swapped for a symlink before it is opened by name).

    Raises:
        WorkspaceError: the path leads outside ``root``.
        ToolError: the path cannot be resolved (a NUL byte, a symlink loop).
    """
    with pinned(root, path, follow_final=True) as spot:
        return spot.path


def path_stat(
    path: str | os.PathLike[str], *, root: RootLike = None, follow_symlinks: bool = True
) -> os.stat_result | None:
    """The status of ``path``, or ``None`` if it is missing.

    Symlinks on the way are followed by the walk (inside the root only); the last one too
    unless ``follow_symlinks`` is false.
    """
    with pinned(root, path, follow_final=follow_symlinks) as spot:
        return None if spot.missing else lstat_at(spot)


def read_bytes(
    path: str | os.PathLike[str], *, limit: int, root: RootLike = None, head: bool = False
) -> tuple[Path, bytes]:
    """Read a regular file; at most ``limit + 1`` bytes are ever read.

    Args:
        path: the file (relative to ``root`` when one is given).
        limit: the most bytes accepted.
        root: the root the path is confined to (``None``: the path as given).
        head: return the first ``limit`` bytes instead of refusing a longer file.

    Returns:
        The file's real path and its bytes.

    Raises:
        ToolError: missing, a directory, not a regular file, or longer than ``limit``.
        WorkspaceError: the path leads outside ``root``.
    """
    with pinned(root, path, follow_final=True) as spot:
        data = _read_at(spot, limit, head=head)
    return spot.path, data


def _read_at(spot: Spot, limit: int, *, head: bool) -> bytes:
    if spot.missing:
        raise os_error("read", spot.path, FileNotFoundError(errno.ENOENT, "missing"))
    fd = _open_regular(spot, "read")
    try:
        chunks: list[bytes] = []
        wanted = limit if head else limit + 1
        while wanted > 0:
            chunk = os.read(fd, min(wanted, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            wanted -= len(chunk)
        claimed = os.fstat(fd).st_size
    except OSError as exc:
        raise os_error("read", spot.path, exc) from exc
    finally:
        os.close(fd)
    if sum(map(len, chunks)) > limit:
        size = f"{claimed:,} bytes" if claimed > limit else f"more than {limit:,} bytes"
        raise ToolError(
            f"{printable(spot.path)} is too large to read ({size}; the limit is {limit:,} bytes)"
        )
    return b"".join(chunks)


def _open_regular(spot: Spot, action: str) -> int:
    if not spot.name:
        raise ToolError(f"cannot {action} {printable(spot.path)}: it is a directory, not a file")
    try:
        fd = os.open(spot.name, FILE_FLAGS, dir_fd=spot.dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise ToolError(
                f"cannot {action} {printable(spot.path)}: it was replaced by a symlink meanwhile"
            ) from exc
        raise os_error(action, spot.path, exc) from exc
    try:
        _check_regular(os.fstat(fd).st_mode, spot.path, action)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_regular(mode: int, path: Path, action: str) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise ToolError(f"cannot {action} {printable(path)}: it is a directory, not a file")
    kind = next((name for test, name in _KINDS if test(mode)), "an unknown kind of file")
    raise ToolError(
        f"cannot {action} {printable(path)}: it is {kind}, not a regular file; only regular "
        "files can be read and written"
    )


def replace_file(
    path: str | os.PathLike[str],
    payload: Callable[[bytes | None], bytes],
    *,
    root: RootLike = None,
    keep_mode: bool = True,
    make_parents: bool = False,
) -> Written:
    """Replace ``path`` atomically: a temporary file in the pinned directory, then a rename.

    Args:
        path: the file (relative to ``root`` when one is given). A symlink inside the root is
            followed, so the file it points to is replaced and the link kept.
        payload: given the first ``HEAD_BYTES`` of the existing file (``None`` for a new one),
            returns the bytes to write; it runs before anything is written.
        root: the root the path is confined to (``None``: the path as given).
        keep_mode: give the new file the permission bits of the one it replaces.
        make_parents: create missing parent directories (inside the root).

    Raises:
        ToolError: the target is a directory, not a regular file, read-only, or cannot be
            written; the old contents are then untouched.
        WorkspaceError: the path leads outside ``root``.
    """
    with pinned(root, path, follow_final=True, make_parents=make_parents) as spot:
        if spot.missing:
            raise os_error("write", spot.path, FileNotFoundError(errno.ENOENT, "missing"))
        if not spot.name:
            raise ToolError(f"{printable(spot.path)} is a directory, not a file")
        existing = lstat_in(spot.name, spot.dir_fd)
        mode = None
        head = None
        if existing is not None:
            _check_regular(existing.st_mode, spot.path, "write")
            _check_writable(spot, existing)
            mode = stat.S_IMODE(existing.st_mode) if keep_mode else None
            head = _read_at(spot, HEAD_BYTES, head=True)
        data = payload(head)
        try:
            _rename_into(spot, data, mode)
        except OSError as exc:
            raise os_error("write", spot.path, exc) from exc
    return Written(spot.path, len(data), existing is None)


def _check_writable(spot: Spot, info: os.stat_result) -> None:
    writable = os.access(spot.name, os.W_OK, dir_fd=spot.dir_fd, follow_symlinks=False)
    if writable and info.st_mode & 0o222:
        return
    raise ToolError(
        f"{printable(spot.path)} is read-only (mode {stat.S_IMODE(info.st_mode):04o}); it was "
        "not changed. Make it writable first if it really should change"
    )


def _rename_into(spot: Spot, data: bytes, mode: int | None) -> None:
    temporary = ""
    for _attempt in range(100):
        temporary = f".{spot.name}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(
                temporary,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | CLOEXEC,
                0o666,
                dir_fd=spot.dir_fd,
            )
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "no free temporary file name")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.rename(temporary, spot.name, src_dir_fd=spot.dir_fd, dst_dir_fd=spot.dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=spot.dir_fd)
        raise
    with contextlib.suppress(OSError):  # some file systems cannot fsync a directory
        os.fsync(spot.dir_fd)


def remove(path: str | os.PathLike[str], *, root: RootLike = None, tree: bool = False) -> Path:
    """Remove the file, symlink (never what it points to) or, with ``tree``, folder ``path``.

    Returns:
        The real path of what was removed.

    Raises:
        ToolError: missing, a folder without ``tree``, or not removable.
        WorkspaceError: the path (its parent folders) leads outside ``root``.
    """
    with pinned(root, path, follow_final=False) as spot:
        info = None if spot.missing or not spot.name else lstat_in(spot.name, spot.dir_fd)
        if info is None:
            raise ToolError(f"{printable(spot.path)} does not exist")
        try:
            if not stat.S_ISDIR(info.st_mode):
                os.unlink(spot.name, dir_fd=spot.dir_fd)
            elif tree:
                shutil.rmtree(spot.name, dir_fd=spot.dir_fd)
            else:
                raise ToolError(f"{printable(spot.path)} is a folder, not a file")
        except OSError as exc:
            raise os_error("remove", spot.path, exc) from exc
    return spot.path


def remove_empty_folder(path: str | os.PathLike[str], *, root: RootLike = None) -> bool:
    """Remove the folder ``path`` if it is empty; whether it was removed."""
    with pinned(root, path, follow_final=False) as spot:
        if spot.missing or not spot.name:
            return False
        try:
            os.rmdir(spot.name, dir_fd=spot.dir_fd)
        except OSError:
            return False
    return True
