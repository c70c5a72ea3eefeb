"""The ``write_file`` tool: create a file or replace all of it, atomically."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

import neta


class WriteFileArgs(BaseModel):
    """Arguments of ``write_file``."""

    path: str = Field(description="The file to write, relative to the workspace root.")
    content: str = Field(description="The complete new contents of the file.")


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``write_file`` tool for ``session``: paths are confined to its workspace."""

    def write_file(args: WriteFileArgs) -> str:
        path = neta.resolve_in_workspace(session.workspace, args.path)
        if path.is_dir():
            raise neta.ToolError(f"{args.path} is a directory, not a file")
        existed = path.exists()
        content = args.content
        converted = False
        if existed and _uses_crlf(path) and _has_bare_lf(content):
            content = content.replace("\r\n", "\n").replace("\n", "\r\n")
            converted = True
        written = neta.atomic_write(path, content, keep_mode=True, make_parents=True)
        shown = path.relative_to(session.workspace).as_posix()
        verb = "Overwrote" if existed else "Created"
        note = " (line endings converted to CRLF, as the file had)" if converted else ""
        return f"{verb} {shown}: {written:,} bytes, {_line_count(content)} lines{note}."

    return neta.Tool(name=SCHEMA.name, execute=write_file)


def _uses_crlf(path: Path) -> bool:
    """Whether the existing file is text whose every line ends in CRLF."""
    try:
        return neta.read_text(path).newline == "\r\n"
    except neta.ToolError:  # binary or another encoding: no line-ending style to keep
        return False


def _has_bare_lf(text: str) -> bool:
    return text.count("\n") > text.count("\r\n")


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


SCHEMA = neta.ToolSchema(
    name="write_file",
    toolset="base",
    description=(
        "Write a text file in the workspace: create it (and any missing parent directories) "
        "or replace its entire contents. The write is atomic and keeps the file's permissions."
    ),
    args=WriteFileArgs,
    guidance=(
        "write_file replaces the whole file with `content`, exactly as given: to change part "
        "of an existing file, use patch instead. Give the complete text, never a fragment or "
        "a placeholder such as '... rest unchanged ...'. If the existing file uses CRLF line "
        "endings and your content uses plain LF, the content is converted to CRLF; a UTF-8 "
        "byte order mark at the start of the existing file is kept."
    ),
    when_to_use="To create a new file or rewrite one completely, use write_file.",
)
