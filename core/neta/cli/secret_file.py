"""Secrets the command line takes: read from a file (``--token-file``), or warned about.

A value given on the command line (``--token``, ``--api-key``) is in the process's arguments,
which every user of the machine reads with ``ps``. An environment variable or a file that
only its owner may read is not.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import typer

MAX_BYTES = 64 * 1024
"""The largest secret file read; a larger one is not a token or a key."""


def read_secret_file(path: Path, option: str) -> str:
    """The secret ``path`` holds: its text, less one trailing newline.

    Warns on stderr when the file is a regular file that its group or others may read.

    Raises:
        typer.BadParameter: the file cannot be read, is empty, is not text, or holds more
            than one line (``option`` names it).
    """
    try:
        with path.open("rb") as file:
            mode = os.fstat(file.fileno()).st_mode
            data = file.read(MAX_BYTES + 1)
    except OSError as exc:
        raise _refused(option, f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise _refused(option, f"{str(path)!r} is larger than a secret ({MAX_BYTES} bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _refused(option, f"{str(path)!r} is not UTF-8 text") from None
    secret = text.removesuffix("\n").removesuffix("\r")
    if not secret:
        raise _refused(option, f"{str(path)!r} is empty")
    if "\n" in secret or "\r" in secret:
        raise _refused(option, f"{str(path)!r} holds more than one line")
    if stat.S_ISREG(mode) and mode & 0o044 and os.name != "nt":
        typer.echo(
            f"Warning: {path} can be read by other users (mode {stat.S_IMODE(mode):04o}); "
            f"chmod 600 {path}",
            err=True,
        )
    return secret


def secret_option(value: str | None, path: Path | None, *, option: str, instead: str) -> str | None:
    """The secret ``option`` gives: its ``value`` (with a warning), or ``{option}-file``'s text.

    ``instead`` names the environment variable to prefer. ``None`` when neither is given.

    Raises:
        typer.BadParameter: both are given, or the file cannot give a secret.
    """
    if value is not None and path is not None:
        raise _refused(option, f"give {option} or {option}-file, not both")
    if path is not None:
        return read_secret_file(path, f"{option}-file")
    if value is not None:
        typer.echo(
            f"Warning: {option} is visible to other users of this machine (in `ps`); "
            f"prefer {instead} or {option}-file",
            err=True,
        )
    return value


def _refused(option: str, message: str) -> typer.BadParameter:
    return typer.BadParameter(message, param_hint=f"'{option}'")
