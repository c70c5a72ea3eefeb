"""The ``write_file`` tool: create a file or replace all of it, atomically."""

from __future__ import annotations

from pydantic import BaseModel, Field

import neta


class WriteFileArgs(BaseModel):
    """Arguments of ``write_file``."""

    path: str = Field(description="The file to write, relative to the workspace root.")
    content: str = Field(description="The complete new contents of the file.")


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``write_file`` tool for ``session``: paths are confined to its workspace."""

    def write_file(args: WriteFileArgs) -> neta.ToolResult:
        before = _text_now(session, args.path)
        written = neta.write_text(
            args.path, args.content, root=session.workspace, make_parents=True
        )
        shown = neta.printable(written.path.relative_to(session.workspace).as_posix())
        verb = "Created" if written.created else "Overwrote"
        note = " (line endings converted to CRLF, as the file had)" if written.crlf else ""
        lines = _line_count(args.content)
        data: dict[str, object] = {"path": shown}
        if before is not None or written.created:  # what changed, for hosts to show
            if before and written.crlf:  # the content given is written with the file's CRLF
                before = before.replace("\r\n", "\n")
            data["diff"] = neta.text_diff(before or "", args.content, shown, max_lines=None)
        return neta.ToolResult(
            content=f"{verb} {shown}: {written.size:,} bytes, {lines} lines{note}.", data=data
        )

    def preview(args: WriteFileArgs) -> str:
        """The diff from the file as it is (empty when it is new) to the content given."""
        where = neta.resolve_in_workspace(session.workspace, args.path)
        shown = neta.printable(where.relative_to(session.workspace).as_posix())
        try:
            before = neta.read_text(args.path, root=session.workspace).text
        except neta.WorkspaceError:
            raise
        except neta.ToolError:  # a new file (or one that cannot be read): all of it is new
            before = ""
        diff = neta.text_diff(before, args.content, shown)
        return diff or f"(no change to {shown})"

    return neta.Tool(name=SCHEMA.name, execute=write_file, preview=preview)


def _text_now(session: neta.SessionContext, path: str) -> str | None:
    """The file's text before it is written; ``None`` when there is none that can be read."""
    try:
        return neta.read_text(path, root=session.workspace).text
    except neta.ToolError:  # no such file yet, or not one to read: writing says what is wrong
        return None


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


SCHEMA = neta.ToolSchema(
    effect="writes",
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
        "byte order mark at the start of the existing file is kept. Read-only files and "
        "anything that is not a regular file (a FIFO, a device) are refused."
    ),
    when_to_use="To create a new file or rewrite one completely, use write_file.",
)
