"""Which host folders a sandbox hides, and which it shows again read-only.

Hidden (an empty, size-bounded in-memory folder in their place): the home folder (as ``HOME``
and the password database say), ``NETA_HOME`` (its real path, a symlink followed) and
``HIDDEN_SYSTEM``. A host running as root also cannot rely on file permissions, so there every
entry of ``ROOT_SCANNED`` that others may not read is hidden too (``/etc/shadow``,
``/etc/ssl/private``, a database's data folder).

Shown again read-only: the folders of the programs the host runs with (``PATH`` entries and
the running Python's prefixes) that a hidden folder covers; for a toolchain of the home
folder, the parts ``TOOLCHAIN_PARTS`` names, never its configuration, and with files named
like credentials (``CREDENTIAL_NAMES``) hidden all the same.
"""

from __future__ import annotations

import functools
import os
import pwd
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from neta.home import neta_home

HIDDEN_SYSTEM = ("/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm")
"""Folders replaced by empty ones in every sandbox (besides the home folder and NETA_HOME)."""

ROOT_SCANNED = (
    "/etc",
    "/var",
    "/srv",
    "/opt",
    "/home",
    "/mnt",
    "/media",
    "/boot",
    "/usr/local",
    "/lost+found",
)
"""Where a host running as root hides what other users may not read."""

TOOLCHAIN_PARTS: dict[str, tuple[str, ...]] = {
    ".pyenv": ("bin", "libexec", "plugins", "shims", "versions", "version"),
    ".rustup": ("toolchains", "settings.toml"),
    ".cargo": ("bin",),
    ".nvm": ("nvm.sh", "alias", "versions/node/*/bin", "versions/node/*/lib"),
    ".volta": ("bin", "tools/image"),
    ".bun": ("bin",),
    ".deno": ("bin",),
    ".sdkman": ("candidates",),
    ".local/bin": (".",),
    ".local/share/uv/python": (".",),
    "go": ("bin", "pkg/mod"),
}
"""Toolchains of the home folder, and the parts of each shown read-only when a ``PATH`` entry
lies in the toolchain (a venv's ``python`` links into ``~/.pyenv/versions``): their programs,
never their configuration (``~/.cargo/config.toml``, ``~/.nvm/.../etc/npmrc`` hold tokens).
A ``PATH`` entry of the home folder in none of them is shown as it is."""

CREDENTIAL_NAMES = (
    "credentials",
    "credentials.toml",
    "credentials.json",
    ".netrc",
    "_netrc",
    "npmrc",
    ".npmrc",
    ".pypirc",
    "pip.conf",
    "pip.ini",
    ".yarnrc",
    ".yarnrc.yml",
    "settings.xml",
    "gradle.properties",
    ".git-credentials",
    "auth.json",
)
"""Names of files that hold credentials, hidden besides inside what is shown (down to
``_CREDENTIAL_DEPTH``; a name alike in another case too)."""

_CREDENTIAL_DEPTH = 3
_SCAN_LIMIT = 100_000  # entries a root host's scan reads before it hides the rest whole


@dataclass(frozen=True)
class Layout:
    """What one sandbox hides and shows of the host.

    Attributes:
        hidden: folders replaced by empty ones, by real path, shallowest first.
        unreadable: folders others may not read, hidden on a host running as root.
        hidden_files: files replaced by an empty one (root-only secrets, credentials).
        shown: folders shown read-only over the hidden ones.
    """

    hidden: tuple[Path, ...]
    unreadable: tuple[Path, ...]
    hidden_files: tuple[Path, ...]
    shown: tuple[Path, ...]


def host_layout() -> Layout:
    """The layout for this process's user, ``HOME``, ``NETA_HOME`` and ``PATH`` as they are now."""
    home = Path(os.environ.get("HOME") or _account_home()).resolve()
    return _layout(home, neta_home().resolve(), os.environ.get("PATH", ""), os.geteuid())


def _account_home() -> str:
    return pwd.getpwuid(os.getuid()).pw_dir


@functools.lru_cache(maxsize=16)
def _layout(home: Path, secret: Path, search_path: str, euid: int) -> Layout:
    hidden: list[Path] = []
    for candidate in (home, Path(_account_home()), secret, *map(Path, HIDDEN_SYSTEM)):
        if not _is_dir(candidate):
            continue
        real = candidate.resolve()
        if real != Path("/") and real not in hidden:
            hidden.append(real)
    hidden_dirs, unreadable_files = _unreadable_by_others() if euid == 0 else ((), ())
    shown = _tools_shown(hidden, home, secret, search_path)
    hidden_files = [*unreadable_files]
    for root in shown:
        hidden_files += _credentials_in(root)
    return Layout(
        tuple(sorted(hidden, key=lambda p: len(p.parts))),
        tuple(sorted(hidden_dirs, key=lambda p: len(p.parts))),
        tuple(hidden_files),
        tuple(shown),
    )


def _tools_shown(hidden: list[Path], home: Path, secret: Path, search_path: str) -> list[Path]:
    candidates = [*search_path.split(os.pathsep), sys.prefix, sys.base_prefix]
    shown: list[Path] = []
    for entry in candidates:
        if not entry or not os.path.isabs(entry):
            continue
        path = Path(entry).resolve()
        if not _is_dir(path) or not any(inside(path, root) for root in hidden):
            continue
        for part in _toolchain_parts(path, home) or [path]:
            if part in hidden or inside(secret, part) or part in shown:
                continue
            shown.append(part)
    return shown


def _toolchain_parts(path: Path, home: Path) -> list[Path]:
    """The parts to show of the toolchain ``path`` lies in (none: it is in no toolchain)."""
    for root, parts in TOOLCHAIN_PARTS.items():
        if inside(path, home / root):
            found: list[Path] = []
            for part in parts:
                found += sorted((home / root).glob(part)) if part != "." else [home / root]
            return [p for p in found if not p.is_symlink()]
    return []


def _credentials_in(root: Path) -> list[Path]:
    found: list[Path] = []
    base_depth = len(root.parts)
    for folder, dirs, files in os.walk(root):
        depth = len(Path(folder).parts) - base_depth
        if depth >= _CREDENTIAL_DEPTH:
            dirs[:] = []
        for name in files:
            if name.lower() in CREDENTIAL_NAMES:
                path = Path(folder) / name
                if not path.is_symlink():
                    found.append(path)
    return found


@functools.cache
def _unreadable_by_others() -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """Folders and files under ``ROOT_SCANNED`` that others may not read (root's view).

    Read once per process: it takes a fifth of a second on a small system.
    """
    dirs: list[Path] = []
    files: list[Path] = []
    budget = _SCAN_LIMIT
    pending = [Path(p) for p in ROOT_SCANNED]
    while pending:
        folder = pending.pop()
        if folder.is_symlink():
            continue
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        budget -= len(entries)
        if budget < 0:  # too large to read: hide what is left whole
            dirs += [folder, *pending]
            break
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            path = Path(entry.path)
            if stat.S_ISDIR(info.st_mode):
                if info.st_mode & 0o005 != 0o005:
                    dirs.append(path)
                else:
                    pending.append(path)
            elif stat.S_ISREG(info.st_mode) and not info.st_mode & 0o004 and info.st_size:
                files.append(path)  # an empty one (a lock file) holds nothing to hide
    return tuple(dirs), tuple(files)


def _is_dir(path: Path) -> bool:
    """Whether ``path`` is a folder this process can see (one it may not look into is not)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def inside(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or lies under it (both absolute and resolved)."""
    below, above = str(path), str(root)
    return below == above or below.startswith(above if above == "/" else above + "/")
