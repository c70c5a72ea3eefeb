"""Command patterns (``pytest *``) matched against a ``bash`` command line.

An allow rule is read strictly and a deny or ask rule widely:

- allow: each simple command of the line is compared as written (words joined by single
  spaces). A line holding anything the text cannot show (``$(...)``, backticks, ``bash -c``,
  ``eval``, a here-document...) is approved by no allow rule, nor is a command that writes,
  through a redirection, outside the workspace or somewhere the text cannot tell.
- deny and ask: every command the line may run is compared, under several views: as
  written, without leading ``NAME=value`` assignments, with ``/usr/bin/rm`` read as ``rm``,
  through wrappers (``sudo rm``, ``env X=1 rm``, ``xargs rm``, ``timeout 5 rm``, ``find
  -exec rm``), and inside substitutions, ``bash -c '...'``, ``eval`` and here-documents fed
  to a shell.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from neta.permissions._shell import UNKNOWN, SimpleCommand, parse_command

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "su", "runuser"})
"""Programs whose ``-c`` option takes a command line to run."""

WRAPPERS = frozenset(
    {"sudo", "doas", "env", "xargs", "exec", "command", "builtin", "nice", "nohup", "timeout"}
    | {"time", "stdbuf", "setsid", "ionice", "chrt", "taskset", "flock", "nsenter", "unshare"}
    | {"chroot", "strace", "ltrace", "watch", "busybox"}
)
"""Programs that run the command given after their options (seen through by deny rules)."""

_EXEC_OPTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_DIRECTORY_CHANGES = frozenset({"cd", "pushd", "popd"})
_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_DESCRIPTOR_FILE = re.compile(r"/dev/fd/[0-9]+")
PROTECTED_FOLDERS = (".git", ".neta")
"""Folders of a workspace whose files make tools run commands (git's hooks and settings,
Neta's own): no allow rule approves a redirection into them."""
_INPUTS = frozenset({"<", "<<", "<<-", "<<<"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_UNSEEN = re.compile(r"[$`*?\[{]|^~")
_MAX_VIEWS = 64
_MAX_LEVEL = 8
_MAX_READS = 64  # strings of code read for one line, in all
_MAX_READ_CHARACTERS = 200_000  # and their characters
_NETWORK_FILES = ("/dev/tcp/", "/dev/udp/")  # bash opens a connection for these itself


@dataclass(frozen=True)
class CommandLine:
    """A ``bash`` command line, read for matching.

    Attributes:
        commands: the simple commands at its top level; an allow rule must cover each.
        views: every text a deny or ask rule is compared with.
        opaque: why no allow rule can approve it (empty when one may).
        readable: false when it could not be read in full: deny and ask rules then match it.
    """

    commands: tuple[SimpleCommand, ...]
    views: frozenset[str]
    opaque: tuple[str, ...]
    readable: bool


@functools.lru_cache(maxsize=256)
def command_line(text: str) -> CommandLine:
    """Read ``text`` for matching (cached: one line is matched against many rules)."""
    return _read(text, 0)


@functools.lru_cache(maxsize=256)
def command_pattern(pattern: str) -> re.Pattern[str]:
    r"""Compile a command pattern: ``*`` matches any text, ``\*`` a star, ``\\`` a backslash.

    Runs of whitespace count as one space. A pattern ending in `` *`` also matches the command
    without arguments: ``pytest *`` matches ``pytest`` and ``pytest -x``, not ``pytest-cov``.
    """
    pieces = _glob_pieces(" ".join(pattern.split()))
    tail = ""
    if len(pieces) >= 2 and pieces[-1] is None and (pieces[-2] or "").endswith(" "):
        pieces = [*pieces[:-2], (pieces[-2] or "")[:-1]]
        tail = "(?: .*)?"
    body = "".join(".*" if piece is None else re.escape(piece) for piece in pieces)
    return re.compile(body + tail, re.S)


def covered(
    pattern: str,
    line: CommandLine,
    workspace: Path,
    protected: Callable[[str], bool] | None = None,
    *,
    edits_allowed: bool = True,
) -> tuple[frozenset[int], str]:
    """Which of ``line.commands`` (by index) an allow rule's pattern approves.

    ``protected`` says whether a path is one a deny or ask rule of a file tool speaks about:
    a command redirecting its output there is not approved. Without ``edits_allowed`` (the
    mode asks before edits) no command whose output goes to a file is: that is an edit.

    Returns:
        The indexes, and why commands the pattern matches are not approved after all
        (``""`` when nothing held it back).
    """
    compiled = command_pattern(pattern)
    matching = [
        index
        for index, command in enumerate(line.commands)
        if compiled.fullmatch(_text(command.words))
    ]
    if not matching:
        return frozenset(), ""
    if line.opaque:
        return frozenset(), "the command holds " + " and ".join(line.opaque)
    moves = any(c.words and c.words[0] in _DIRECTORY_CHANGES for c in line.commands)
    approved, held = set(), ""
    for index in matching:
        problem = _redirect_problem(
            line.commands[index], workspace, moves, protected, edits_allowed=edits_allowed
        )
        if problem:
            held = held or problem
        else:
            approved.add(index)
    return frozenset(approved), held


def hit(pattern: str, line: CommandLine) -> Literal["yes", "maybe", "no"]:
    """Whether a deny or ask rule's pattern matches what ``line`` may run.

    ``yes``: a command as written (or through a wrapper) matches. ``maybe``: the line cannot
    be read in full, or text the shell makes up there (``UNKNOWN``: an expansion, a glob)
    could make it match. ``no``: nothing it may run matches.
    """
    compiled = command_pattern(pattern)
    maybe = not line.readable
    for view in line.views:
        if UNKNOWN not in view:
            if compiled.fullmatch(view):
                return "yes"
        elif compiled.fullmatch(view.replace(UNKNOWN, _FRESH)):
            return "yes"  # a star of the pattern takes the made-up text, whatever it is
        elif not maybe:
            maybe = any(_overlap(shape, _shape(view)) for shape in _pattern_shapes(pattern))
    return "maybe" if maybe else "no"


_FRESH = "\x01"
"""A character no pattern holds: where it matches, only a star took it, as it would any text."""

_ANY = None
"""In a shape: any text (a pattern's ``*``, a command's ``UNKNOWN``)."""

_Shape = tuple[str | None, ...]


@functools.lru_cache(maxsize=256)
def _pattern_shapes(pattern: str) -> tuple[_Shape, ...]:
    """A pattern as shapes: characters and ``_ANY``; one ending in `` *`` also without it."""
    pieces = _glob_pieces(" ".join(pattern.split()))
    shapes = [_pieces_shape(pieces)]
    if len(pieces) >= 2 and pieces[-1] is None and (pieces[-2] or "").endswith(" "):
        shapes.append(_pieces_shape([*pieces[:-2], (pieces[-2] or "")[:-1]]))
    return tuple(shapes)


def _pieces_shape(pieces: list[str | None]) -> _Shape:
    return tuple(item for piece in pieces for item in ((_ANY,) if piece is None else piece))


def _shape(view: str) -> _Shape:
    return tuple(_ANY if char == UNKNOWN else char for char in view)


def _overlap(first: _Shape, second: _Shape) -> bool:
    """Whether some text fits both shapes (each ``_ANY`` standing for any text)."""
    stack, seen = [(0, 0)], set[tuple[int, int]]()
    while stack:
        i, j = stack.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        left = first[i] if i < len(first) else ""
        right = second[j] if j < len(second) else ""
        if i == len(first) and j == len(second):
            return True
        if left is _ANY:
            stack.append((i + 1, j))  # it stands for nothing more
            if right is not _ANY and j < len(second):
                stack.append((i, j + 1))  # it takes the other's next character
        if right is _ANY:
            stack.append((i, j + 1))
            if left is not _ANY and i < len(first):
                stack.append((i + 1, j))
        if left is not _ANY and right is not _ANY and left and left == right:
            stack.append((i + 1, j + 1))
    return False


def escape(command: str) -> str:
    """A pattern that matches ``command`` only (its stars and backslashes escaped)."""
    return command.replace("\\", "\\\\").replace("*", "\\*")


def _glob_pieces(pattern: str) -> list[str | None]:
    """Literal pieces, with ``None`` for each unescaped star."""
    pieces: list[str | None] = []
    literal: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            literal.append(pattern[index + 1])
            index += 2
            continue
        if char == "*":
            pieces += ["".join(literal), None]
            literal = []
        else:
            literal.append(char)
        index += 1
    pieces.append("".join(literal))
    return [piece for piece in pieces if piece != ""]


def _read(text: str, level: int, budget: list[int] | None = None) -> CommandLine:
    """Read ``text`` and the code it runs from strings.

    Past ``_MAX_READS`` reads of code, or ``_MAX_READ_CHARACTERS`` characters of it, in all,
    the line is unreadable: a chain of ``eval`` grows the views, or repeats its text, at each
    step.
    """
    budget = [_MAX_READS, _MAX_READ_CHARACTERS] if budget is None else budget
    parsed = parse_command(text)
    views: set[str] = set()
    opaque = list(parsed.opaque)
    readable = parsed.readable
    read_already: set[str] = set()
    for command in (*parsed.commands, *parsed.nested):
        words_views, complete = _views(command.shapes)
        readable = readable and complete
        for words in words_views:
            views.add(_text(words))
            inner = _code_in(words, command)
            if inner is None:
                continue
            reason, code = inner
            opaque.append(reason)
            if code is None:  # it runs code the line does not hold (standard input, a file)
                readable = False
                continue
            if code in read_already:
                continue
            read_already.add(code)
            budget[0] -= 1
            budget[1] -= len(code)
            if level >= _MAX_LEVEL or budget[0] < 0 or budget[1] < 0:
                readable = False
                continue
            read = _read(code, level + 1, budget)
            views |= read.views
            opaque += read.opaque
            readable = readable and read.readable
    return CommandLine(parsed.commands, frozenset(views), tuple(dict.fromkeys(opaque)), readable)


def _text(words: tuple[str, ...]) -> str:
    """The words as a pattern sees them: joined, with each run of whitespace one space."""
    return " ".join(" ".join(words).split())


def _views(words: tuple[str, ...]) -> tuple[list[tuple[str, ...]], bool]:
    """The ways a deny rule may see ``words``; false if there were too many to try."""
    found: list[tuple[str, ...]] = []
    starts, seen = [0], set[int]()
    while starts:
        start = starts.pop()
        if start in seen or start >= len(words):
            continue
        if len(seen) >= _MAX_VIEWS:
            return list(dict.fromkeys(found)), False
        seen.add(start)
        found.append(words[start:])
        rest = words[start:]
        while rest and _ASSIGNMENT.match(rest[0]):
            rest = rest[1:]
        if not rest:
            continue
        name = os.path.basename(rest[0]) or rest[0]
        found += [rest, (name, *rest[1:])]
        offset = len(words) - len(rest)
        if name in WRAPPERS:
            starts += [offset + i for i, word in enumerate(rest) if i and word[:1] != "-"]
        if name == "find":
            starts += [offset + i + 1 for i, word in enumerate(rest) if word in _EXEC_OPTIONS]
        if name == "git":
            found.append(("git", *_git_subcommand(rest[1:])))
    return list(dict.fromkeys(found)), True


_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})


def _git_subcommand(words: tuple[str, ...]) -> tuple[str, ...]:
    """Git's words from its subcommand on: ``-C . push`` is ``push`` to a deny rule."""
    index = 0
    while index < len(words) and words[index][:1] == "-":
        index += 2 if words[index] in _GIT_VALUED else 1
    return words[index:]


def _code_in(words: tuple[str, ...], command: SimpleCommand) -> tuple[str, str | None] | None:
    """Code that ``words`` run from a string or from standard input: why it is opaque, and it.

    ``None`` as the code: it runs code the line does not hold (a shell reading standard
    input or a script, ``source``).
    """
    if not words:
        return None
    name = os.path.basename(words[0])
    if name == "eval":
        return "eval", " ".join(words[1:])
    if name == "trap":
        code = next((word for word in words[1:] if word[:1] != "-"), "")
        return "a command string run by trap", code
    if name in (".", "source"):
        return f"a file's code run by {name}", None
    if name == "git":
        settings = [w for i, w in enumerate(words) if i and words[i - 1] in ("-c", "--config-env")]
        settings += [w[2:] for w in words[1:] if w.startswith("-c") and len(w) > 2]
        if settings:  # a setting may name a program git runs (an alias "!...", a pager...)
            code = "; ".join(value.partition("=")[2].lstrip("!") for value in settings)
            return "a program git runs from a -c setting", code
        return None
    if name == "env":
        for index, word in enumerate(words[1:], 1):
            if word.startswith("--split-string"):
                given = word.partition("=")[2] or (
                    words[index + 1] if index + 1 < len(words) else ""
                )
                return "a command string split by env", given
            if word.startswith("-S") or (word[:1] == "-" and word[:2] != "--" and "S" in word):
                given = word[word.index("S") + 1 :] or (
                    words[index + 1] if index + 1 < len(words) else ""
                )
                return "a command string split by env -S", given
        return None
    if name not in SHELLS:
        return None
    options = [word for word in words[1:] if word[:1] == "-"]
    operands = [word for word in words[1:] if word[:1] != "-"]
    if any(word[:2] != "--" and "c" in word[1:] for word in options):
        return f"a command string run by {name} -c", operands[0] if operands else ""
    for redirect in command.redirects:
        if redirect.op in ("<<", "<<-") and redirect.body is not None:
            return f"a here-document run by {name}", redirect.body
        if redirect.op == "<<<":
            return f"a here-string run by {name}", redirect.target
    if not operands or any(word[:2] != "--" and "s" in word[1:] for word in options):
        return f"commands {name} reads from its standard input", None
    return f"a script run by {name}", None


def _redirect_problem(
    command: SimpleCommand,
    workspace: Path,
    moves: bool,
    protected: Callable[[str], bool] | None = None,
    *,
    edits_allowed: bool = True,
) -> str:
    """Why a redirection of ``command`` keeps an allow rule from approving it, or ``""``."""
    for redirect in command.redirects:
        target = redirect.target
        if target.startswith(_NETWORK_FILES) or "/dev/tcp" in target or "/dev/udp" in target:
            return f"it connects to {target!r} (bash opens network connections for these)"
        if redirect.op in _INPUTS or target in _DEVICES or _DESCRIPTOR_FILE.fullmatch(target):
            continue
        if redirect.op in (">&", "<&") and re.fullmatch(r"\d*-?", target):
            continue  # a descriptor duplicated or closed, not a file
        if _UNSEEN.search(target) or "\0" in target:
            return f"it writes to {target!r}, a name the shell expands"
        if moves and not os.path.isabs(target):
            return f"it writes to {target!r} after changing directory"
        root = os.path.realpath(workspace)
        try:
            resolved = os.path.realpath(os.path.join(root, target))
        except (OSError, ValueError):  # a name no file can have (a lone surrogate)
            return f"it writes to {target!r}, a name that cannot be resolved"
        if os.path.commonpath([root, resolved]) != root:
            return f"it writes to {target!r}, outside the workspace"
        inside = Path(os.path.relpath(resolved, root)).parts
        if inside and inside[0].casefold() in PROTECTED_FOLDERS:
            return f"it writes to {target!r}, in {inside[0]}/ (what it holds runs commands)"
        if protected is not None and protected(target):
            return f"it writes to {target!r}, a file a deny or ask rule protects"
        if not edits_allowed:
            return f"it writes to {target!r}: an edit, which this mode asks before"
    return ""


def exact_patterns(line: CommandLine, workspace: Path) -> tuple[str, ...]:
    """Patterns that approve exactly the commands of ``line``; none when no allow rule can."""
    if line.opaque or not line.readable or not line.commands:
        return ()
    moves = any(c.words and c.words[0] in _DIRECTORY_CHANGES for c in line.commands)
    patterns = []
    for command in line.commands:
        text = _text(command.words)
        if not text or _redirect_problem(command, workspace, moves):
            return ()
        patterns.append(escape(text))
    return tuple(dict.fromkeys(patterns))
