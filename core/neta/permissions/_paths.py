r"""Path patterns (``src/**``, ``*.md``, ``.env``) matched against a file tool's ``path``.

A pattern is a glob relative to the workspace, read like a ``.gitignore`` line: ``*`` and
``?`` stay within one folder, ``**`` crosses folders, ``\`` escapes the next character, a
pattern with no ``/`` (``*.md``, ``.env``) matches a name at any depth, and one with a ``/``
(``src/**``, ``/notes.txt``) is anchored at the workspace root. A pattern that matches a
folder covers what is inside it.

The path is resolved first (``..`` collapsed, symlinks followed for the part that exists):
an allow rule must match where the path really leads, and no allow rule matches a path that
leads outside the workspace. A deny or ask rule matches the path as written or where it
leads, and any path it cannot place inside the workspace.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path


@functools.lru_cache(maxsize=256)
def path_pattern(pattern: str) -> re.Pattern[str]:
    """Compile a path pattern to a regular expression over workspace-relative paths."""
    anchored = "/" in pattern.rstrip("/")
    glob = pattern.lstrip("/").rstrip("/")
    parts, index = [], 0
    while index < len(glob):
        if glob.startswith("**/", index):
            parts.append("(?:.*/)?")
            index += 3
        elif glob.startswith("**", index):
            parts.append(".*")
            index += 2
        elif glob[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            parts.append("[^/]")
            index += 1
        elif glob[index] == "\\" and index + 1 < len(glob):
            parts.append(re.escape(glob[index + 1]))
            index += 2
        else:
            parts.append(re.escape(glob[index]))
            index += 1
    body = "".join(parts)
    if body.endswith("/.*"):
        body = body[:-3]  # `src/**` is `src` and all inside it, which the tail below adds
    return re.compile(("" if anchored else "(?:.*/)?") + body + "(?:/.*)?", re.S)


def relative_paths(path: str, workspace: Path) -> tuple[str | None, str | None]:
    """``path`` relative to ``workspace``: as written (``..`` collapsed) and where it leads.

    Either is ``None`` when it lies outside the workspace or cannot be resolved.
    """
    if "\0" in path:
        return None, None
    given = os.path.abspath(workspace)
    root = os.path.realpath(workspace)
    written = _inside(os.path.normpath(os.path.join(given, path)), given)
    try:
        real = _inside(os.path.realpath(os.path.join(root, path)), root)
    except (OSError, ValueError):  # a symlink loop on some systems
        real = None
    return written, real


def allows(pattern: str, path: str, workspace: Path) -> tuple[bool, str]:
    """Whether an allow rule's ``pattern`` approves ``path``, and why not when it matches."""
    _written, real = relative_paths(path, workspace)
    if real is None:
        return False, f"{path!r} leads outside the workspace"
    return bool(path_pattern(pattern).fullmatch(real)), ""


def hits(pattern: str, path: str, workspace: Path) -> bool:
    """Whether a deny or ask rule's ``pattern`` matches ``path``."""
    written, real = relative_paths(path, workspace)
    if written is None or real is None:
        return True
    compiled = path_pattern(pattern)
    return bool(compiled.fullmatch(written) or compiled.fullmatch(real))


def escape(path: str) -> str:
    """A pattern that matches exactly ``path`` (relative to the workspace root)."""
    return "/" + re.sub(r"([*?\\])", r"\\\1", path)


def _inside(path: str, root: str) -> str | None:
    if os.path.commonpath([root, path]) != root:
        return None
    return Path(os.path.relpath(path, root)).as_posix()
