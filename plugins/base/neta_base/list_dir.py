"""The ``list_dir`` tool: a bounded, sorted listing of a directory tree."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, Field

import neta

MAX_ENTRIES = 500
"""Entries shown at most; the rest are counted in a final marker."""

SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv"})
"""Directories left out of listings (list one by naming it as ``path``)."""

_MAX_COUNTED = 10_000


class ListDirArgs(BaseModel):
    """Arguments of ``list_dir``."""

    path: str = Field(".", description="The directory to list, relative to the workspace root.")
    depth: int = Field(2, ge=1, le=5, description="How many levels deep to list (1 to 5).")


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``list_dir`` tool for ``session``: paths are confined to its workspace."""

    def list_dir(args: ListDirArgs) -> str:
        root = neta.resolve_in_workspace(session.workspace, args.path)
        if not root.exists():
            raise neta.ToolError(f"{args.path} does not exist")
        if not root.is_dir():
            raise neta.ToolError(f"{args.path} is a file, not a directory; use read_file")
        shown: list[str] = []
        hidden = 0
        for entry in _walk(root, Path(), args.depth):
            if len(shown) < MAX_ENTRIES:
                shown.append(entry)
            elif hidden < _MAX_COUNTED:
                hidden += 1
            else:
                break
        if not shown:
            return "(empty directory)"
        if hidden:
            more = f"{hidden:,}+" if hidden >= _MAX_COUNTED else f"{hidden:,}"
            shown.append(f"... {more} more entries not shown (list a subdirectory instead)")
        return "\n".join(shown)

    return neta.Tool(name=SCHEMA.name, execute=list_dir)


def _walk(directory: Path, prefix: Path, depth: int) -> Iterator[str]:
    """Entries under ``directory`` as paths relative to the listed root, depth first, sorted.

    Symlinks are shown with their target and never followed, so a listing cannot loop or
    wander out of the workspace.
    """
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda e: e.name)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if prefix == Path():
            raise neta.ToolError(f"cannot list {directory.name or directory}: {reason}") from exc
        yield f"{prefix.as_posix()}/ (cannot be listed: {reason})"
        return
    for entry in entries:
        relative = prefix / entry.name
        if entry.is_symlink():
            yield f"{relative.as_posix()} -> {os.readlink(entry.path)}"
        elif entry.is_dir():
            if entry.name in SKIPPED_DIRS:
                continue
            yield f"{relative.as_posix()}/"
            if depth > 1:
                yield from _walk(Path(entry.path), relative, depth - 1)
        else:
            yield relative.as_posix()


SCHEMA = neta.ToolSchema(
    name="list_dir",
    toolset="base",
    description=(
        "List a directory of the workspace, a few levels deep: one path per line, relative "
        "to the listed directory, directories ending in '/', sorted by name."
    ),
    args=ListDirArgs,
    guidance=(
        "list_dir shows up to 500 entries and `depth` levels (default 2, at most 5). It leaves "
        "out .git, node_modules, __pycache__ and .venv; symlinks are shown as 'name -> target' "
        "and not followed. For a large tree, list the subdirectory you care about, or use bash "
        "(find, git ls-files) for searches by name."
    ),
    when_to_use="To see which files exist before opening or creating them, use list_dir.",
)
