"""Applying one fuzzy-matched edit to a file on disk: read, match, write atomically, show a diff.

This is what the ``patch`` tool and the ``neta patch`` command share. A refused edit never
opens the file for writing, so its bytes and its modification time stay as they were.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from neta.fuzzy_match import fuzzy_replace
from neta.fuzzy_match.textfile import atomic_write, read_text
from neta.paths import RootLike, printable

__all__ = ["PatchOutcome", "patch_file", "text_diff"]

_DIFF_CONTEXT_LINES = 2
"""Unchanged lines shown around each change in a patch's diff."""

_MAX_DIFF_LINES = 200
"""A patch's diff is cut after this many lines, with a marker saying how many were left out."""

_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


@dataclass(frozen=True)
class PatchOutcome:
    """What one applied (or, in a dry run, previewed) edit did.

    Attributes:
        path: the file edited.
        strategy: the matcher strategy that found the text (``"exact"``, ``"line_trimmed"``...).
        count: how many occurrences were replaced.
        start_line: the first line of the replaced region, 1-based, in the original file.
        end_line: the last line of the replaced region, 1-based, in the original file.
        diff: a unified diff of the change (2 lines of context, at most 200 lines).
        changed: whether the file's text differs after the edit (in a dry run: would differ).
        whole_diff: the same diff, never cut (for a person to read; ``diff`` is the model's).
    """

    path: Path
    strategy: str
    count: int
    start_line: int
    end_line: int
    diff: str
    changed: bool
    whole_diff: str = ""

    def summary(self) -> str:
        """One line: the strategy that matched, the line range, and the count when several."""
        text = f"strategy: {self.strategy}, lines {self.start_line}\u2013{self.end_line}"
        if self.count > 1:
            text += f", {self.count} replacements"
        return text


def patch_file(
    path: str | os.PathLike[str],
    old: str,
    new: str,
    *,
    replace_all: bool = False,
    dry_run: bool = False,
    label: str | None = None,
    root: RootLike = None,
) -> PatchOutcome:
    """Replace ``old`` with ``new`` in the file at ``path`` using the fuzzy matcher.

    The file is read as UTF-8 text (binary and other encodings are refused), the matcher
    finds ``old`` (see ``neta.fuzzy_match.fuzzy_replace``), and the new text is written
    atomically with the file's BOM and mode kept. Nothing is written in a dry run. Reads and
    writes go through ``neta.paths``: regular files only, bounded (``MAX_TEXT_BYTES``),
    read-only files refused.

    Args:
        path: the file to edit (relative to ``root`` when one is given).
        old: the text to find; it need not match whitespace exactly.
        new: the replacement text.
        replace_all: replace every occurrence instead of refusing when there are several.
        dry_run: compute the outcome and the diff but leave the file alone.
        label: the name shown in the diff headers (default: ``path`` as given); control
            characters in it are shown escaped.
        root: confine ``path`` to this directory (symlinks included); ``None``: as given.

    Raises:
        MatchError: the matcher refused the edit (no match, ambiguous, invalid).
        ToolError: the file cannot be read as UTF-8 text or cannot be written.
        WorkspaceError: ``path`` leads outside ``root``.
    """
    original = read_text(path, root=root)
    replacement = fuzzy_replace(original.text, old, new, replace_all=replace_all)
    changed = replacement.content != original.text
    encoded = original.encode(replacement.content)  # a lone surrogate is refused here
    if changed and not dry_run:
        atomic_write(path, encoded, keep_mode=True, root=root)
    whole = text_diff(original.text, replacement.content, printable(label or path), max_lines=None)
    return PatchOutcome(
        path=Path(path),
        strategy=replacement.strategy,
        count=replacement.count,
        start_line=replacement.start_line,
        end_line=replacement.end_line,
        diff=_cut(whole),
        changed=changed,
        whole_diff=whole,
    )


def text_diff(
    before: str, after: str, label: str, *, max_lines: int | None = _MAX_DIFF_LINES
) -> str:
    r"""A short unified diff between two versions of a file called ``label``.

    What ``patch`` shows, and what a person asked to approve an edit reads: cut after
    ``max_lines`` lines (``None``: whole), with a marker saying how many were left out.

    Line endings are not shown (a CRLF line reads like any other); a last line without a
    final newline gets git's ``\ No newline at end of file`` marker.
    """
    lines = list(_diff_lines(before, after, label))
    if max_lines is not None and len(lines) > max_lines:
        hidden = len(lines) - max_lines
        lines = [*lines[:max_lines], f"... {hidden} more diff lines not shown"]
    return "\n".join(lines)


def _cut(diff: str) -> str:
    """``diff`` as ``text_diff`` cuts it by default."""
    if diff.count("\n") < _MAX_DIFF_LINES:
        return diff
    lines = diff.split("\n")
    hidden = len(lines) - _MAX_DIFF_LINES
    return "\n".join([*lines[:_MAX_DIFF_LINES], f"... {hidden} more diff lines not shown"])


def _diff_lines(before: str, after: str, label: str) -> Iterator[str]:
    raw = difflib.unified_diff(
        _LINE.findall(before),
        _LINE.findall(after),
        fromfile=f"a/{label}",
        tofile=f"b/{label}",
        n=_DIFF_CONTEXT_LINES,
    )
    for line in raw:
        stripped = line.rstrip("\r\n")
        yield stripped
        if not line.endswith("\n") and not line.startswith(("---", "+++", "@@")):
            yield "\\ No newline at end of file"
