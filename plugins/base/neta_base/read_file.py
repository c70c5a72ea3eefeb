"""The ``read_file`` tool: a window of a text file's lines, numbered, or an image to look at."""

from __future__ import annotations

import stat

from pydantic import BaseModel, Field

import neta
import neta.paths

MAX_FILE_BYTES = 10 * 1024 * 1024
"""Files larger than this are refused (read a slice with ``bash`` instead)."""

MAX_LINE_CHARS = 2000
"""Longer lines are cut, with a marker giving their full length."""

MAX_OUTPUT_CHARS = 100_000
"""A window stops early once its text reaches this size, and says where to continue."""


class ReadFileArgs(BaseModel):
    """Arguments of ``read_file``."""

    path: str = Field(description="The file to read, relative to the workspace root.")
    offset: int = Field(1, ge=1, description="The first line to show (1-based).")
    limit: int = Field(2000, ge=1, le=10_000, description="How many lines to show at most.")


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``read_file`` tool for ``session``: paths are confined to its workspace."""

    def read_file(args: ReadFileArgs) -> str | neta.ToolResult:
        info = neta.paths.path_stat(args.path, root=session.workspace)
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise neta.ToolError(
                f"{neta.printable(args.path)} is a directory; use list_dir to see its contents"
            )
        if info is not None and stat.S_ISREG(info.st_mode) and _is_image(session, args.path):
            return _image(session, args.path)
        # resolved and read in one step, so the check above only chooses the message
        text = neta.read_text(args.path, max_bytes=MAX_FILE_BYTES, root=session.workspace).text
        return _render_window(text, offset=args.offset, limit=args.limit)

    return neta.Tool(name=SCHEMA.name, execute=read_file)


def _is_image(session: neta.SessionContext, path: str) -> bool:
    _, head = neta.paths.read_bytes(path, limit=16, root=session.workspace, head=True)
    return neta.ImagePart.media_type_of(head) is not None


def _image(session: neta.SessionContext, path: str) -> neta.ToolResult:
    """The image at ``path``, for the model to look at (downscaled past the caps)."""
    image = neta.ImagePart.from_file(path, root=session.workspace)
    about = {
        "name": image.name,
        "media_type": image.media_type,
        "bytes": image.size,
        "width": image.width,
        "height": image.height,
    }
    return neta.ToolResult(content=image.placeholder, images=(image,), data={"image": about})


def _render_window(text: str, *, offset: int, limit: int) -> str:
    """Lines ``offset`` to ``offset + limit - 1`` of ``text``, numbered, with a continuation note.

    Lines are split on LF only (a CR before it is not shown), so the numbers agree
    with the line numbers ``patch`` reports.
    """
    if not text:
        return "(the file is empty: 0 lines)"
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    total = len(lines)
    if offset > total:
        raise neta.ToolError(
            f"offset {offset} is past the end of the file, which has {total} lines"
        )
    shown: list[str] = []
    size = 0
    last = offset - 1
    for number in range(offset, min(total, offset + limit - 1) + 1):
        line = _cut(lines[number - 1].removesuffix("\r"))
        rendered = f"{number:>6}\t{line}"
        if shown and size + len(rendered) > MAX_OUTPUT_CHARS:
            break
        shown.append(rendered)
        size += len(rendered) + 1
        last = number
    if last < total:
        shown.append(
            f"\n[{total - last} more lines; the file has {total}. "
            f"To continue, call read_file with offset={last + 1}.]"
        )
    return "\n".join(shown)


def _cut(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]}... [line cut: {len(line):,} characters in all]"


SCHEMA = neta.ToolSchema(
    effect="reads",
    name="read_file",
    toolset="base",
    description=(
        "Read a UTF-8 text file in the workspace. Lines come numbered (number, tab, text); "
        "use offset and limit to page through long files. A PNG, JPEG, GIF or WebP image is "
        "shown to you as an image instead."
    ),
    args=ReadFileArgs,
    guidance=(
        "read_file shows at most `limit` lines (2000 by default) starting at line `offset`; "
        "when more remain it says which offset to read next. The line numbers and the tab "
        "after them are not part of the file: never copy them into old_string or content. "
        "Lines over 2000 characters are cut, files over 10 MiB are refused, and binary or "
        "non-UTF-8 files are reported as such rather than shown. Images (PNG, JPEG, GIF, "
        "WebP) come as images, downscaled when large; offset and limit do not apply to them."
    ),
    when_to_use="Before modifying a file you have not read yet, read it with read_file.",
)
