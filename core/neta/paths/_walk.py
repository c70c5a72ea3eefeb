"""The pinned walk: from the root's descriptor one component at a time (see ``neta.paths``)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from neta.errors import ToolError, WorkspaceError, os_reason
from neta.home import neta_home
from neta.paths._printable import printable

MAX_SYMLINKS = 40
"""Symlinks one resolution may follow before it is refused as a loop."""

_RETRIES = 50  # a component that keeps changing kind under us is given up on
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | CLOEXEC
_SYMLINK_ERRNOS = frozenset({errno.ELOOP, errno.EMLINK, errno.ENOTDIR})


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


@dataclass
class Spot:
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

    def run(self, parts: list[str], *, follow_final: bool, make_parents: bool) -> Spot:
        pending = deque(parts)
        missing: list[str] = []
        while True:
            part = _next_part(pending)
            if part is None:
                if missing:
                    return self._end(missing[-1], missing[:-1])
                return self._end("", [])
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
                    return self._end(part, [])
                self._follow(target, pending)
            else:
                self._enter(part, pending, missing, make_parents)

    def _end(self, name: str, missing: list[str]) -> Spot:
        fd = self.fds.pop()
        path = self.here().joinpath(*missing, name) if name else self.here()
        return Spot(fd, name, path, missing=bool(missing))

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
                self.fds.append(os.open(name, DIR_FLAGS, dir_fd=here))
                self.names.append(name)
                if self.confined:
                    refuse_private(self.fds[-1], self.here())
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
                    info = lstat_in(name, here)
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


def lstat_in(name: str, dir_fd: int) -> os.stat_result | None:
    """The status of ``name`` in ``dir_fd`` (a symlink itself), or ``None`` if missing."""
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
            fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY | CLOEXEC)
        except OSError as exc:
            raise os_error("open", real, exc) from exc
    else:
        with pinned(root.within, root.path, follow_final=True) as spot:
            if spot.missing or lstat_at(spot) is None:
                raise ToolError(f"{printable(spot.path)} does not exist")
            fd = open_dir_at(spot)
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
def pinned(
    root: RootLike, path: str | os.PathLike[str], *, follow_final: bool, make_parents: bool = False
) -> Iterator[Spot]:
    """Walk ``path`` below ``root`` and yield where it ended (its directory held open).

    Raises:
        WorkspaceError: the path leads outside ``root``.
        ToolError: the path cannot be resolved (a NUL byte, a symlink loop, a parent that
            is not a directory).
    """
    confinement = _as_root(root)
    given = os.fspath(path)
    if "\x00" in given:
        raise ToolError(f"invalid path {printable(given)!r}: it contains a NUL byte")
    with _root_fd(confinement or PinnedRoot(Path("/"))) as (fd, real_root):
        if confinement is None:
            parts = os.path.join(os.getcwd(), given).split("/")
        elif given.startswith("/"):
            below = _parts_below(real_root, given)
            if below is None:
                raise WorkspaceError(given, root=str(real_root), resolved=os.path.realpath(given))
            parts = below
        else:
            parts = given.split("/")
        walk = _Walk(fd, real_root, given, confined=confinement is not None)
        try:
            spot = walk.run(parts, follow_final=follow_final, make_parents=make_parents)
        except UnicodeEncodeError as exc:
            raise ToolError(f"invalid path {printable(given)!r}: {exc.reason}") from exc
        except OSError as exc:
            raise os_error("resolve", Path(given), exc) from exc
        finally:
            walk.close()
    try:
        yield spot
    finally:
        os.close(spot.dir_fd)


def lstat_at(spot: Spot) -> os.stat_result | None:
    """The status of what ``spot`` names (a symlink itself), or ``None`` if missing."""
    if not spot.name:
        return os.fstat(spot.dir_fd)
    return lstat_in(spot.name, spot.dir_fd)


def open_dir_at(spot: Spot) -> int:
    """A new descriptor of the directory ``spot`` names (never through a symlink)."""
    if not spot.name:
        return os.dup(spot.dir_fd)
    try:
        fd = os.open(spot.name, DIR_FLAGS, dir_fd=spot.dir_fd)
    except OSError as exc:
        raise os_error("open", spot.path, exc) from exc
    try:
        refuse_private(fd, spot.path)
    except ToolError:
        os.close(fd)
        raise
    return fd


def refuse_private(fd: int, path: Path) -> None:
    """Refuse the directory open on ``fd`` when it is ``NETA_HOME``, wherever that lies.

    Neta's own data (sessions, memory, trusted workspaces, the user's MCP servers) may sit
    inside a workspace; a file tool never reads or writes there, by whatever path it came.

    Raises:
        ToolError: it is.
    """
    info = os.fstat(fd)
    try:
        private = os.stat(neta_home())
    except OSError:
        return
    if (info.st_dev, info.st_ino) == (private.st_dev, private.st_ino):
        raise ToolError(
            f"{printable(path)} is Neta's own data folder (NETA_HOME): file tools do not reach it"
        )


def os_error(action: str, path: Path, exc: OSError) -> ToolError:
    """A ``ToolError`` saying in words why ``action`` failed on ``path``."""
    return ToolError(f"cannot {action} {printable(path)}: {os_reason(exc)}")
