"""Confining paths to a session's workspace root, symlinks included."""

from __future__ import annotations

import os
from pathlib import Path

from neta.errors import ToolError, WorkspaceError

__all__ = ["resolve_in_workspace"]


def resolve_in_workspace(root: Path, path: str | Path) -> Path:
    """Resolve ``path`` to a real path inside ``root``.

    A relative ``path`` is taken relative to ``root``. Symlinks are followed wherever they
    exist, so a link that leads out of the workspace is caught like ``..`` or an absolute path
    elsewhere. A path that does not exist yet is judged by where it would be created: its
    nearest existing ancestor must itself lie inside the root.

    Args:
        root: the workspace root.
        path: the path a tool was given.

    Returns:
        The resolved absolute path: ``root`` itself or something under it.

    Raises:
        WorkspaceError: the path leads outside ``root``.
        ToolError: the path cannot be a path at all (an embedded NUL byte, a symlink loop).
    """
    real_root = Path(root).resolve()
    given = str(path)
    try:
        candidate = Path(path)
        joined = candidate if candidate.is_absolute() else real_root / candidate
        resolved = Path(os.path.realpath(joined))
        anchor = _nearest_existing(resolved).resolve(strict=True)
    except (OSError, ValueError) as exc:
        raise ToolError(f"invalid path {given!r}: {exc}") from exc
    for found in (resolved, anchor):
        if not _is_within(found, real_root):
            raise WorkspaceError(given, root=str(real_root), resolved=str(found))
    return resolved


def _nearest_existing(path: Path) -> Path:
    """``path`` or its closest ancestor that exists (a dangling symlink does not count)."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path(path.anchor)


def _is_within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
