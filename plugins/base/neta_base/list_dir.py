"""The ``list_dir`` tool: a bounded, sorted listing of a directory tree."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import PurePosixPath

from pydantic import BaseModel, Field

import neta
import neta.paths

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
        shown_path = neta.printable(args.path)
        info = neta.paths.path_stat(args.path, root=session.workspace)
        if info is None:
            raise neta.ToolError(f"{shown_path} does not exist")
        if not stat.S_ISDIR(info.st_mode):
            raise neta.ToolError(f"{shown_path} is not a directory; use read_file for a file")
        shown: list[str] = []
        hidden = 0
        # the check above only chooses the message: the listing resolves the path again, pinned
        with neta.paths.open_directory(args.path, root=session.workspace) as directory:
            for entry in _walk(directory, PurePosixPath(), args.depth):
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


def _walk(directory: neta.paths.Directory, prefix: PurePosixPath, depth: int) -> Iterator[str]:
    """Entries under ``directory`` as paths relative to the listed root, depth first, sorted.

    Symlinks are shown with their target and never followed, so a listing cannot loop or
    wander out of the workspace. Names are shown with control characters escaped, so each
    entry is exactly one line.
    """
    try:
        entries = directory.entries()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if prefix == PurePosixPath():
            raise neta.ToolError(f"cannot list {neta.printable(directory.path)}: {reason}") from exc
        yield f"{neta.printable(prefix.as_posix())}/ (cannot be listed: {reason})"
        return
    for entry in entries:
        relative = prefix / entry.name
        shown = neta.printable(relative.as_posix())
        if entry.kind == "symlink":
            yield f"{shown} -> {neta.printable(entry.target or '?')}"
        elif entry.kind == "dir":
            if entry.name in SKIPPED_DIRS:
                continue
            yield f"{shown}/"
            if depth > 1:
                yield from _walk_child(directory, entry.name, relative, depth - 1)
        else:
            yield shown


def _walk_child(
    directory: neta.paths.Directory, name: str, relative: PurePosixPath, depth: int
) -> Iterator[str]:
    try:
        with directory.child(name) as child:
            yield from _walk(child, relative, depth)
    except OSError as exc:  # replaced meanwhile (by a symlink, say) or unreadable
        yield f"{neta.printable(relative.as_posix())}/ (cannot be listed: {exc.strerror or exc})"


SCHEMA = neta.ToolSchema(
    effect="reads",
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
