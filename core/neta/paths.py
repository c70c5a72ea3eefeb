"""The paths module: every file tool reaches files through it, pinned by descriptors.

A path is resolved and used in one step. The walk starts from a descriptor of the root and
opens one component at a time relative to the previous one, never following a symlink in the
kernel (``O_NOFOLLOW``): a symlink is read and its target walked the same way, so one that
leads out of the root is refused however the tree changes meanwhile. The final file is opened
non-blocking and checked with ``fstat`` (regular files only), reads stop at their limit plus
one byte, and writes go to a temporary file renamed within the pinned directory.

A ``PinnedRoot`` may itself lie inside another root (a skill folder inside a skills
directory inside a workspace): it is then reached by the same walk. Without a root a path is
taken as given (``neta patch`` on the user's own files) and walked from ``/``, so the file
checks and bounded reads still apply.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from neta.errors import ToolError, WorkspaceError

MAX_SYMLINKS = 40
"""Symlinks one resolution may follow before it is refused as a loop."""

HEAD_BYTES = 64 * 1024
"""How much of an existing file a write looks at (BOM, line endings) before replacing it."""

_RETRIES = 50  # a component that keeps changing kind under us is given up on
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | _CLOEXEC
_SYMLINK_ERRNOS = frozenset({errno.ELOOP, errno.EMLINK, errno.ENOTDIR})
_KINDS = (
    (stat.S_ISLNK, "a symlink (it was swapped in meanwhile)"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


@dataclass(frozen=True)
class PinnedRoot:
    """A directory that paths are confined to.

    Attributes:
        path: the directory. Without ``within`` it is opened as given (the host chose it);
            with ``within`` it is reached by a pinned walk inside that outer root, so a
            symlink that leads it out of the outer root is refused.
        within: the root this one must stay inside, or ``None``.
    """

    path: Path
    within: PinnedRoot | None = None


RootLike = PinnedRoot | str | os.PathLike[str] | None
"""A root as the functions here take it: a ``PinnedRoot``, a directory, or ``None`` (none)."""


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


def printable(text: str | os.PathLike[str]) -> str:
    r"""``text`` with control characters escaped, so a name can never break a line.

    A file called ``"a\nb"`` is shown as ``a\nb`` with a visible backslash; tabs, carriage
    returns, escape sequences, other control and line-separator characters likewise.
    """
    value = os.fspath(text)
    if value.isprintable():
        return value
    return "".join(char if char.isprintable() or char == " " else _escape(char) for char in value)


def _escape(char: str) -> str:
    escaped = repr(char)[1:-1]
    return escaped if escaped != char else f"\\u{ord(char):04x}"


@dataclass
class _Spot:
    """Where a walk ended: an open directory and a name in it ("" for the directory itself)."""

    dir_fd: int
    name: str
    path: Path
    missing: bool  # a directory on the way does not exist


class _Walk:
    """One resolution of ``given`` below an open root directory (see the module docs)."""

    def __init__(self, root_fd: int, root: Path, given: str, *, confined: bool) -> None:
        self.fds = [os.dup(root_fd)]
        self.names: list[str] = []
        self.root = root
        self.given = given
        self.confined = confined
        self.links = 0

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()

    def here(self) -> Path:
        return self.root.joinpath(*self.names)

    def run(self, parts: list[str], *, follow_final: bool, make_parents: bool) -> _Spot:
        pending = deque(parts)
        missing: list[str] = []
        while True:
            part = _next_part(pending)
            if part is None:
                if missing:
                    return self._spot(missing[-1], missing[:-1])
                return self._spot("", [])
            if part == "..":
                if missing:
                    missing.pop()
                elif len(self.fds) > 1:
                    os.close(self.fds.pop())
                    self.names.pop()
                elif self.confined:
                    raise self._escape(os.path.join(self.here(), "..", *pending))
                continue
            if missing:
                missing.append(part)
            elif _next_part(deque(pending)) is None:
                target = self._final(part, follow_final)
                if target is None:
                    return self._spot(part, [])
                self._follow(target, pending)
            else:
                self._enter(part, pending, missing, make_parents)

    def _spot(self, name: str, missing: list[str]) -> _Spot:
        fd = self.fds.pop()
        path = self.here().joinpath(*missing, name) if name else self.here()
        return _Spot(fd, name, path, missing=bool(missing))

    def _final(self, name: str, follow: bool) -> str | None:
        """The symlink target to walk next when ``name`` is a link to follow, else ``None``."""
        try:
            info = os.stat(name, dir_fd=self.fds[-1], follow_symlinks=False)
        except FileNotFoundError:
            return None
        if not (follow and stat.S_ISLNK(info.st_mode)):
            return None
        with contextlib.suppress(OSError):
            return os.readlink(name, dir_fd=self.fds[-1])
        return None  # it stopped being a link: the caller's O_NOFOLLOW open tells what it is

    def _enter(self, name: str, pending: deque[str], missing: list[str], make: bool) -> None:
        here = self.fds[-1]
        for _attempt in range(_RETRIES):
            try:
                self.fds.append(os.open(name, _DIR_FLAGS, dir_fd=here))
                self.names.append(name)
                return
            except FileNotFoundError:
                if not make:
                    missing.append(name)
                    return
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=here)
            except OSError as exc:
                if exc.errno not in _SYMLINK_ERRNOS:
                    raise
                try:
                    target = os.readlink(name, dir_fd=here)
                except OSError:
                    info = _lstat(name, here)
                    if info is not None and not stat.S_ISDIR(info.st_mode):
                        raise NotADirectoryError(errno.ENOTDIR, "not a directory") from exc
                    continue  # it changed kind meanwhile: look again
                self._follow(target, pending)
                return
        raise ToolError(f"{printable(self.given)} kept changing while it was being resolved")

    def _follow(self, target: str, pending: deque[str]) -> None:
        self.links += 1
        if self.links > MAX_SYMLINKS:
            raise ToolError(
                f"cannot resolve {printable(self.given)}: too many levels of symbolic links "
                "(a symlink loop?)"
            )
        if target.startswith("/"):
            inside = _parts_below(self.root, target) if self.confined else target.split("/")
            if inside is None:
                raise self._escape(os.path.join(target, *pending))
            while len(self.fds) > 1:
                os.close(self.fds.pop())
            self.names.clear()
            pending.extendleft(reversed(inside))
        else:
            pending.extendleft(reversed(target.split("/")))

    def _escape(self, where: str) -> WorkspaceError:
        resolved = os.path.realpath(os.path.join(self.here(), where))
        return WorkspaceError(self.given, root=str(self.root), resolved=resolved)


def _next_part(pending: deque[str]) -> str | None:
    while pending:
        part = pending.popleft()
        if part not in ("", "."):
            return part
    return None


def _lstat(name: str, dir_fd: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _parts_below(root: Path, absolute: str) -> list[str] | None:
    """The components of ``absolute`` below ``root``, or ``None`` when it leads elsewhere.

    The shortest prefix of ``absolute`` that is the root (as written or through links outside
    the root) counts; the rest is walked, never handed to the kernel.
    """
    parts = absolute.split("/")
    for index in range(1, len(parts) + 1):
        prefix = "/".join(parts[:index]) or "/"
        if prefix == str(root) or os.path.realpath(prefix) == str(root):
            return parts[index:]
    return None


@contextlib.contextmanager
def _root_fd(root: PinnedRoot) -> Iterator[tuple[int, Path]]:
    if root.within is None:
        real = Path(os.path.realpath(root.path))
        try:
            fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
        except OSError as exc:
            raise _os_error("open", real, exc) from exc
    else:
        with _spot(root.within, root.path, follow_final=True) as spot:
            if spot.missing or _lstat_at(spot) is None:
                raise ToolError(f"{printable(spot.path)} does not exist")
            fd = _open_dir_at(spot)
            real = spot.path
    try:
        yield fd, real
    finally:
        os.close(fd)


def _as_root(root: RootLike) -> PinnedRoot | None:
    if root is None or isinstance(root, PinnedRoot):
        return root
    return PinnedRoot(Path(root))


@contextlib.contextmanager
def _spot(
    root: RootLike, path: str | os.PathLike[str], *, follow_final: bool, make_parents: bool = False
) -> Iterator[_Spot]:
    pinned = _as_root(root)
    given = os.fspath(path)
    if "\x00" in given:
        raise ToolError(f"invalid path {printable(given)!r}: it contains a NUL byte")
    with _root_fd(pinned or PinnedRoot(Path("/"))) as (fd, real_root):
        if pinned is None:
            parts = os.path.join(os.getcwd(), given).split("/")
        elif given.startswith("/"):
            below = _parts_below(real_root, given)
            if below is None:
                raise WorkspaceError(given, root=str(real_root), resolved=os.path.realpath(given))
            parts = below
        else:
            parts = given.split("/")
        walk = _Walk(fd, real_root, given, confined=pinned is not None)
        try:
            spot = walk.run(parts, follow_final=follow_final, make_parents=make_parents)
        except UnicodeEncodeError as exc:
            raise ToolError(f"invalid path {printable(given)!r}: {exc.reason}") from exc
        except OSError as exc:
            raise _os_error("resolve", Path(given), exc) from exc
        finally:
            walk.close()
    try:
        yield spot
    finally:
        os.close(spot.dir_fd)


def _lstat_at(spot: _Spot) -> os.stat_result | None:
    if not spot.name:
        return os.fstat(spot.dir_fd)
    return _lstat(spot.name, spot.dir_fd)


def _open_dir_at(spot: _Spot) -> int:
    if not spot.name:
        return os.dup(spot.dir_fd)
    try:
        return os.open(spot.name, _DIR_FLAGS, dir_fd=spot.dir_fd)
    except OSError as exc:
        raise _os_error("open", spot.path, exc) from exc


def resolve_in_workspace(root: RootLike, path: str | os.PathLike[str]) -> Path:
    """Resolve ``path`` to a real path inside ``root`` by the pinned walk (for showing it).

    Kept for plugins that name paths; to read or write, use ``read_bytes``, ``replace_file``
    or ``neta.read_text``/``neta.atomic_write`` with ``root=``, which resolve and use in one
    step (a path returned here can be swapped for a symlink before it is opened by name).

    Raises:
        WorkspaceError: the path leads outside ``root``.
        ToolError: the path cannot be resolved (a NUL byte, a symlink loop).
    """
    with _spot(root, path, follow_final=True) as spot:
        return spot.path


def path_stat(
    path: str | os.PathLike[str], *, root: RootLike = None, follow_symlinks: bool = True
) -> os.stat_result | None:
    """The status of ``path``, or ``None`` if it is missing.

    Symlinks on the way are followed by the walk (inside the root only); the last one too
    unless ``follow_symlinks`` is false.
    """
    with _spot(root, path, follow_final=follow_symlinks) as spot:
        return None if spot.missing else _lstat_at(spot)


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
    with _spot(root, path, follow_final=True) as spot:
        data = _read_at(spot, limit, head=head)
    return spot.path, data


def _read_at(spot: _Spot, limit: int, *, head: bool) -> bytes:
    if spot.missing:
        raise _os_error("read", spot.path, FileNotFoundError(errno.ENOENT, "missing"))
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
    except OSError as exc:
        raise _os_error("read", spot.path, exc) from exc
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise ToolError(
            f"{printable(spot.path)} is too large to read (over {limit:,} bytes; the limit is "
            f"{limit:,} bytes)"
        )
    return data


def _open_regular(spot: _Spot, action: str) -> int:
    if not spot.name:
        raise ToolError(f"cannot {action} {printable(spot.path)}: it is a directory, not a file")
    try:
        fd = os.open(spot.name, _FILE_FLAGS, dir_fd=spot.dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise ToolError(
                f"cannot {action} {printable(spot.path)}: it was replaced by a symlink meanwhile"
            ) from exc
        raise _os_error(action, spot.path, exc) from exc
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
    with _spot(root, path, follow_final=True, make_parents=make_parents) as spot:
        if spot.missing:
            raise _os_error("write", spot.path, FileNotFoundError(errno.ENOENT, "missing"))
        if not spot.name:
            raise ToolError(f"{printable(spot.path)} is a directory, not a file")
        existing = _lstat(spot.name, spot.dir_fd)
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
            raise _os_error("write", spot.path, exc) from exc
    return Written(spot.path, len(data), existing is None)


def _check_writable(spot: _Spot, info: os.stat_result) -> None:
    writable = os.access(spot.name, os.W_OK, dir_fd=spot.dir_fd, follow_symlinks=False)
    if writable and info.st_mode & 0o222:
        return
    raise ToolError(
        f"{printable(spot.path)} is read-only (mode {stat.S_IMODE(info.st_mode):04o}); it was "
        "not changed. Make it writable first if it really should change"
    )


def _rename_into(spot: _Spot, data: bytes, mode: int | None) -> None:
    temporary = ""
    for _attempt in range(100):
        temporary = f".{spot.name}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(
                temporary,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC,
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
        fd = os.open(name, _DIR_FLAGS, dir_fd=self._fd)
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
    with _spot(root, path, follow_final=True) as spot:
        info = None if spot.missing else _lstat_at(spot)
        if info is None:
            raise ToolError(f"{printable(spot.path)} does not exist")
        if not stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{printable(spot.path)} is not a directory")
        fd = _open_dir_at(spot)
    try:
        yield Directory(fd, spot.path)
    finally:
        os.close(fd)


def remove(path: str | os.PathLike[str], *, root: RootLike = None, tree: bool = False) -> Path:
    """Remove the file, symlink (never what it points to) or, with ``tree``, folder ``path``.

    Returns:
        The real path of what was removed.

    Raises:
        ToolError: missing, a folder without ``tree``, or not removable.
        WorkspaceError: the path (its parent folders) leads outside ``root``.
    """
    with _spot(root, path, follow_final=False) as spot:
        info = None if spot.missing or not spot.name else _lstat(spot.name, spot.dir_fd)
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
            raise _os_error("remove", spot.path, exc) from exc
    return spot.path


def remove_empty_folder(path: str | os.PathLike[str], *, root: RootLike = None) -> bool:
    """Remove the folder ``path`` if it is empty; whether it was removed."""
    with _spot(root, path, follow_final=False) as spot:
        if spot.missing or not spot.name:
            return False
        try:
            os.rmdir(spot.name, dir_fd=spot.dir_fd)
        except OSError:
            return False
    return True


def _os_error(action: str, path: Path, exc: OSError) -> ToolError:
    reasons = {
        errno.ENOENT: "no such file or directory",
        errno.EISDIR: "it is a directory, not a file",
        errno.EACCES: "permission denied",
        errno.EPERM: "operation not permitted",
        errno.ENOTDIR: "a parent is not a directory",
        errno.ENXIO: "it is not a regular file",
    }
    reason = reasons.get(exc.errno or 0, exc.strerror or str(exc))
    return ToolError(f"cannot {action} {printable(path)}: {reason}")
