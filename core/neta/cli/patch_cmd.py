"""``neta patch``: apply one fuzzy-matched edit to a file, as the ``patch`` tool does."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import typer

from neta.cli.context import echo_json
from neta.errors import ConfigError, MatchError, ToolError
from neta.fuzzy_match.patching import patch_file
from neta.terminal_text import sanitize


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
        # Only the matcher's refusals name the tool's arguments; others quote just the path.
        message = in_flag_names(str(exc)) if isinstance(exc, MatchError) else str(exc)
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
    if outcome.diff:  # the file's own text: it may hold what a terminal would obey
        typer.echo(sanitize(outcome.diff))
    suffix = " (dry run: file not changed)" if dry_run else ""
    typer.echo(outcome.summary() + suffix)


_FLAGS = {
    "set replace_all to true": "give --replace-all",
    "replace_all": "--replace-all",
    "old_string": "--old",
    "new_string": "--new",
}
_ARGUMENT = re.compile(r"\b(?:set replace_all to true|replace_all|old_string|new_string)\b")

_QUOTING_LINE = re.compile(r"(?P<indent> +)(?P<label>file|old_string): +(?P<text>.*)", re.DOTALL)
"""A line quoting the file's or old_string's text after its label (see ``fuzzy_match``)."""

_LABELS = {"file": "file:  ", "old_string": "--old: "}
"""The labels of quoting lines, still aligned."""

_REPR = re.compile(r"""(?<!\w)(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")(?!\w)""")
"""Text quoted inline as Python shows a string (``'# ... rest ...'``)."""


def in_flag_names(message: str) -> str:
    """The matcher's refusal, speaking of this command's flags instead of the tool's arguments.

    Only the message's own words change: text it quotes from the file or from ``--old`` is
    kept as it is, whatever argument names it holds. Blank prose lines are dropped.
    """
    lines = []
    for line in message.split("\n"):
        quoting = _QUOTING_LINE.fullmatch(line)
        if quoting is not None:
            lines.append(quoting["indent"] + _LABELS[quoting["label"]] + quoting["text"])
        elif line.strip():
            lines.append(_outside_reprs(line.rstrip()))
    return "\n".join(lines)


def _outside_reprs(line: str) -> str:
    """``line`` with argument names renamed everywhere but in the strings it quotes."""
    kept = 0
    parts = []
    for quoted in _REPR.finditer(line):
        parts += [_ARGUMENT.sub(_flag, line[kept : quoted.start()]), quoted[0]]
        kept = quoted.end()
    return "".join([*parts, _ARGUMENT.sub(_flag, line[kept:])])


def _flag(argument: re.Match[str]) -> str:
    return _FLAGS[argument[0]]


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
