"""The ``patch`` tool: replace one piece of a file, found by the fuzzy matcher."""

from __future__ import annotations

from pydantic import BaseModel, Field

import neta


class PatchArgs(BaseModel):
    """Arguments of ``patch``."""

    path: str = Field(description="The file to edit, relative to the workspace root.")
    old_string: str = Field(
        description="The text to replace, with enough surrounding lines to be unique."
    )
    new_string: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(
        False, description="Replace every occurrence instead of requiring exactly one."
    )


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``patch`` tool for ``session``: paths are confined to its workspace."""

    def patch(args: PatchArgs) -> neta.ToolResult:
        # the label only names the file; reading and writing resolve it again, pinned
        where = neta.resolve_in_workspace(session.workspace, args.path)
        shown = neta.printable(where.relative_to(session.workspace).as_posix())
        # A refusal (MatchError) is a ToolError carrying the matcher's message; the file is
        # left exactly as it was, so it travels to the model unchanged.
        outcome = neta.patch_file(
            args.path,
            args.old_string,
            args.new_string,
            replace_all=args.replace_all,
            label=shown,
            root=session.workspace,
        )
        return neta.ToolResult(
            content="\n".join(part for part in (outcome.diff, outcome.summary()) if part),
            data={
                "path": shown,
                "strategy": outcome.strategy,
                "count": outcome.count,
                "start_line": outcome.start_line,
                "end_line": outcome.end_line,
                "diff": outcome.whole_diff,  # for a person, never cut
            },
        )

    def preview(args: PatchArgs) -> str:
        """The diff the edit would make (the matcher's refusal, when it would be refused)."""
        where = neta.resolve_in_workspace(session.workspace, args.path)
        shown = neta.printable(where.relative_to(session.workspace).as_posix())
        outcome = neta.patch_file(
            args.path,
            args.old_string,
            args.new_string,
            replace_all=args.replace_all,
            dry_run=True,
            label=shown,
            root=session.workspace,
        )
        return outcome.diff or f"(no change to {shown})"

    return neta.Tool(name=SCHEMA.name, execute=patch, preview=preview)


SCHEMA = neta.ToolSchema(
    effect="writes",
    name="patch",
    toolset="base",
    description=(
        "Edit a file by replacing old_string with new_string. The text is found even when its "
        "whitespace or indentation differs slightly; the edit is refused, and the file left "
        "untouched, when old_string is missing or matches more than one place."
    ),
    args=PatchArgs,
    guidance=(
        "Prefer patch for local changes to an existing file; use write_file only for new files "
        "or complete rewrites. Read the file first (read_file) so old_string is copied from "
        "its real text, without the line-number prefix. Give old_string enough surrounding "
        "lines to match exactly one place; if patch reports several matches, add context or, "
        "when you mean every occurrence, set replace_all. Whitespace and indentation need not "
        "match exactly, but the words must, and every line you change or delete must be "
        "copied exactly. new_string is written as given: never abbreviate it (or old_string) "
        "with '...' or '# existing code' placeholders. The file's encoding, line endings and "
        "final newline are kept. On success patch shows a diff and the line range it changed; "
        "on refusal nothing was written: read its message, re-read the file, and try again."
    ),
    when_to_use="To change part of an existing file, use patch.",
)
