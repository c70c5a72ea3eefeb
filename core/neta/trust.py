"""Workspace trust: a repository's own configuration is used only once its user trusts it.

A workspace may hold files that run code or steer the model: ``.neta/mcp.json`` (servers to
start, tool descriptions the model reads) and ``.neta/skills`` (text put into every
session's prompt). A cloned repository is someone else's, so these are used only for a
workspace its user trusted, recorded in ``NETA_HOME/trust.json`` by the workspace's real
path and a hash of those files: a changed file makes the workspace untrusted again until
the user looks at it once more.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neta.errors import ConfigError
from neta.home import neta_home

CONFIG_FOLDER = ".neta"
"""The workspace folder holding its own configuration."""

TRUSTED_FILES = ("mcp.json", "permissions.toml")
"""Files of ``CONFIG_FOLDER`` that need trust."""

TRUSTED_FOLDERS = ("skills",)
"""Folders of ``CONFIG_FOLDER`` whose every file needs trust."""

STORE_NAME = "trust.json"
"""The record of trusted workspaces, in ``NETA_HOME``."""

_MAX_FILES = 10_000  # files of a skills folder hashed at the most; more is refused
_MAX_BYTES = 16 * 1024 * 1024  # the largest file of a workspace's configuration trusted


@dataclass(frozen=True)
class TrustedWorkspace:
    """One record: a workspace, the hash of its configuration then, and when it was trusted."""

    path: str
    fingerprint: str
    trusted_at: str


def config_files(workspace: Path) -> list[Path]:
    """The files of ``workspace`` that need trust, in a stable order (none: nothing to trust).

    Symlinks are listed as they are (their target is not followed).

    Raises:
        ConfigError: a skills folder holds more than ``_MAX_FILES`` files.
    """
    root = workspace / CONFIG_FOLDER
    found = [root / name for name in TRUSTED_FILES if os.path.lexists(root / name)]
    for folder in TRUSTED_FOLDERS:
        base = root / folder
        if base.is_dir():
            for directory, dirs, files in os.walk(base):
                dirs.sort()
                found += [Path(directory) / name for name in sorted(files)]
                if len(found) > _MAX_FILES:
                    raise ConfigError(f"{base} holds more than {_MAX_FILES} files")
    return found


def fingerprint(workspace: Path) -> str:
    """A hash of the names, kinds and contents of ``config_files(workspace)``.

    Each name and content goes in with its length first, so no two different sets of files
    hash alike by moving bytes between them; a symlink counts by its target's text (never
    followed), anything but a regular file or a symlink by its kind only.

    Raises:
        ConfigError: a file is larger than ``_MAX_BYTES``, or there are too many.
    """
    digest = hashlib.sha256()
    root = workspace / CONFIG_FOLDER
    for path in config_files(workspace):
        _field(digest, os.fsencode(path.relative_to(root)))
        _field(digest, _content(path))
    return digest.hexdigest()


def _field(digest: Any, data: bytes) -> None:
    digest.update(len(data).to_bytes(8, "big"))
    digest.update(data)


def _content(path: Path) -> bytes:
    try:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            return b"link\0" + os.fsencode(os.readlink(path))
        if not stat.S_ISREG(info.st_mode):
            return b"other\0" + oct(stat.S_IFMT(info.st_mode)).encode()
        if info.st_size > _MAX_BYTES:
            raise ConfigError(f"{path} is too large to trust ({info.st_size:,} bytes)")
        file_hash = hashlib.sha256()
        with path.open("rb") as file:
            while chunk := file.read(1 << 16):
                file_hash.update(chunk)
    except OSError as exc:
        return f"unreadable\0{exc.errno}".encode()
    return b"file\0" + file_hash.digest()


class TrustStore:
    """The workspaces a user trusts, kept in ``home / STORE_NAME``.

    Args:
        home: ``NETA_HOME`` (default: the current one).
    """

    def __init__(self, home: Path | None = None) -> None:
        self.path = (home or neta_home()) / STORE_NAME

    def records(self) -> dict[str, TrustedWorkspace]:
        """Every record, by real path.

        Raises:
            ConfigError: the file is not a record of trusted workspaces.
        """
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{self.path}: cannot read trusted workspaces: {exc}") from exc
        entries = data.get("workspaces") if isinstance(data, dict) else None
        if not isinstance(entries, dict):
            raise ConfigError(f'{self.path}: expected {{"workspaces": {{PATH: {{...}}}}}}')
        return {
            path: TrustedWorkspace(path, str(entry.get("fingerprint")), str(entry.get("at")))
            for path, entry in entries.items()
            if isinstance(entry, dict)
        }

    def is_trusted(self, workspace: Path) -> bool:
        """Whether ``workspace`` is trusted with the configuration it holds now.

        A configuration that cannot be trusted at all (a file too large) is not.
        """
        record = self.records().get(str(workspace.resolve()))
        if record is None:
            return False
        try:
            return record.fingerprint == fingerprint(workspace.resolve())
        except ConfigError:
            return False

    def trust(self, workspace: Path) -> TrustedWorkspace:
        """Trust ``workspace`` with the configuration it holds now."""
        real = workspace.resolve()
        record = TrustedWorkspace(
            str(real), fingerprint(real), dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        )
        records = self.records()
        records[record.path] = record
        self._write(records)
        return record

    def untrust(self, workspace: Path) -> bool:
        """Forget ``workspace``; whether it was trusted."""
        records = self.records()
        found = records.pop(str(workspace.resolve()), None) is not None
        if found:
            self._write(records)
        return found

    def _write(self, records: dict[str, TrustedWorkspace]) -> None:
        data = {
            "workspaces": {
                r.path: {"fingerprint": r.fingerprint, "at": r.trusted_at} for r in records.values()
            }
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            json.dump(data, file, indent=2)
        os.replace(temporary, self.path)


def workspace_trusted(workspace: Path, setting: bool | None = None) -> bool:
    """Whether ``workspace``'s own configuration may be used.

    ``setting``: a host's explicit choice (``True``/``False``); ``None`` asks the user's record.
    A workspace with no such configuration is trusted (there is nothing to use).
    """
    if setting is not None:
        return setting
    if not config_files(workspace):
        return True
    return TrustStore().is_trusted(workspace)
