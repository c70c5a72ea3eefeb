"""``neta patch``: apply one fuzzy-matched edit to a file, as the ``patch`` tool does."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from neta.cli.context import echo_json
from neta.errors import ConfigError, ToolError
from neta.fuzzy_match.patching import patch_file


def patch(
    path: Path = typer.Argument(..., help="The file to edit (relative to the current directory)."),
    old: str | None = typer.Option(None, "--old", help="The text to replace."),
    old_file: Path | None = typer.Option(
        None, "--old-file", help="Read the text to replace from this file ('-': stdin)."
    ),
    new: str | None = typer.Option(None, "--new", help="The replacement text."),
    new_file: Path | None = typer.Option(
        None, "--new-file", help="Read the replacement from this file ('-': stdin)."
    ),
    replace_all: bool = typer.Option(
        False, "--replace-all", help="Replace every occurrence instead of exactly one."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the diff; change nothing."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Replace text in a file; whitespace need not match exactly. Prints the diff."""
    if old_file is not None and new_file is not None and str(old_file) == str(new_file) == "-":
        raise ConfigError("only one of --old-file and --new-file can read standard input")
    old_text, new_text = _same_line_ends(
        _one_of(old, old_file, "--old"), _one_of(new, new_file, "--new")
    )
    try:
        outcome = patch_file(
            path, old_text, new_text, replace_all=replace_all, dry_run=dry_run, label=str(path)
        )
    except ToolError as exc:
        message = in_flag_names(str(exc))
        if as_json:
            echo_json({"path": str(path), "changed": False, "error": message})
            raise typer.Exit(1) from None
        raise ToolError(message) from exc
    if as_json:
        echo_json(
            {
                "path": str(outcome.path),
                "strategy": outcome.strategy,
                "count": outcome.count,
                "start_line": outcome.start_line,
                "end_line": outcome.end_line,
                "changed": outcome.changed,
                "diff": outcome.diff,
            }
        )
        return
    if outcome.diff:
        typer.echo(outcome.diff)
    suffix = " (dry run: file not changed)" if dry_run else ""
    typer.echo(outcome.summary() + suffix)


_FLAG_NAMES = (
    ("set replace_all to true", "give --replace-all"),
    ("replace_all", "--replace-all"),
    ("old_string", "--old"),
    ("new_string", "--new"),
)


def in_flag_names(message: str) -> str:
    """The matcher's refusal, speaking of this command's flags instead of the tool's arguments.

    Its lines (one candidate each) are kept.
    """
    for argument, flag in _FLAG_NAMES:
        message = message.replace(argument, flag)
    return "\n".join(line.rstrip() for line in message.splitlines() if line.strip())


def _same_line_ends(old: str, new: str) -> tuple[str, str]:
    """Make the replacement end as the text it replaces does; an empty one deletes.

    Text read from a file ends in a newline; a ``--new`` typed inline does not.
    """
    if new and old.endswith("\n") and not new.endswith("\n"):
        new += "\n"
    elif new.endswith("\n") and not old.endswith("\n"):
        new = new[:-1]
    return old, new


def _one_of(text: str | None, source: Path | None, option: str) -> str:
    """The value of ``option`` given inline or as ``option-file``; exactly one is required."""
    if text is not None and source is None:
        return text
    if text is not None or source is None:
        raise ConfigError(f"give exactly one of {option} and {option}-file")
    try:
        if str(source) != "-":
            return source.read_bytes().decode("utf-8")
        stdin = getattr(sys.stdin, "buffer", None)  # bytes keep the text's line ends as sent
        return stdin.read().decode("utf-8") if stdin is not None else sys.stdin.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {option}-file {source}: {exc}") from exc
