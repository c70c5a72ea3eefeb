"""Run ``neta`` in-process, as ``main`` does, with its own stdin, stdout and stderr."""

from __future__ import annotations

import contextlib
import io
import locale
import os
import subprocess
import sys
import unittest.mock
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import typer
import typer.main

from neta.cli.app import app, main


@dataclass
class Done:
    code: int
    stdout: str
    stderr: str


def _typers(root: typer.Typer) -> Iterator[typer.Typer]:
    yield root
    for group in root.registered_groups:
        if group.typer_instance is not None:
            yield from _typers(group.typer_instance)


def _behaviour(callback: Any) -> tuple[object, ...]:
    """What a callback does: the very code object, its module's globals, what its closure holds.

    Plugins add their commands anew in each ``main`` call (``neta_commands``): a new function
    from the same ``def`` over the same objects, the same behaviour. Ids are safe to compare:
    the commands built for a key keep its code, globals and cells alive. (Option defaults are
    made anew by the same code too; the commands built first keep the first ones.)
    """
    if callback is None:
        return (None,)
    cells = getattr(callback, "__closure__", None) or ()
    return (
        id(getattr(callback, "__code__", callback)),
        id(getattr(callback, "__globals__", None)),
        *(_held(cell) for cell in cells),
    )


def _held(cell: Any) -> object:
    try:
        return id(cell.cell_contents)
    except ValueError:  # a cell not filled yet: never the same key, so always built
        return object()


def _settings(info: Any) -> tuple[object, ...]:
    """A command's or group's own settings (help, hidden...), everything but its callback."""
    return tuple(
        (name, repr(value))
        for name, value in sorted(vars(info).items())
        if name not in ("callback", "typer_instance")
    )


def _shape(root: typer.Typer) -> tuple[object, ...]:
    """What the click commands built from ``root`` depend on: each command and group it has."""
    return tuple(
        (
            id(t),
            _behaviour(t.registered_callback.callback if t.registered_callback else None),
            tuple((_settings(c), _behaviour(c.callback)) for c in t.registered_commands),
            tuple((_settings(g), id(g.typer_instance)) for g in t.registered_groups),
        )
        for t in _typers(root)
    )


_BUILT: dict[tuple[object, ...], Any] = {}  # typer's own click commands, by the app's shape
_build_command = typer.main.get_command


def _built_once(root: typer.Typer) -> Any:
    """``typer.main.get_command``, once for each shape of the app in this process.

    A real ``neta`` process turns the app into click commands once; each in-process run did it
    again (~35 ms of CPU: typer reads every command's signature). The commands are reused only
    for the same callbacks over the same objects; click makes a new context for each run.
    """
    key = _shape(root)
    if key not in _BUILT:
        if len(_BUILT) >= 16:  # the plugins some tests make add commands of their own
            _BUILT.clear()
        _BUILT[key] = _build_command(root)
    return _BUILT[key]


@contextlib.contextmanager
def _app_as_started() -> Iterator[None]:
    """Undo the commands plugins add to the app (``neta_commands``) during one ``main`` call.

    A process calls ``main`` once; calling it again in the same process would add them again
    (and each later command would build every copy), which no real run does.
    """
    saved = [(t, list(t.registered_commands), list(t.registered_groups)) for t in _typers(app)]
    try:
        with unittest.mock.patch.object(typer.main, "get_command", _built_once):
            yield
    finally:
        for t, commands, groups in saved:
            t.registered_commands[:] = commands
            t.registered_groups[:] = groups


class _TypedIn(io.StringIO):
    """Standard input that says it is a terminal: what was typed at it, read as a user types."""

    def isatty(self) -> bool:
        return True


def run_neta(
    capsys: pytest.CaptureFixture[str], *args: str, stdin: str = "", typed: bool = False
) -> Done:
    """``neta ARGS`` with ``stdin`` piped in (``typed``: typed at a terminal); the exit status
    and what it printed."""
    capsys.readouterr()  # what came before is not this command's
    saved = sys.stdin
    sys.stdin = _TypedIn(stdin) if typed else io.StringIO(stdin)
    try:
        with _app_as_started():
            main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    else:  # pragma: no cover - main always exits
        code = -1
    finally:
        sys.stdin = saved
    out, err = capsys.readouterr()
    return Done(code, out, err)


def _output_stream(encoding: str | None, errors: str) -> io.TextIOBase:
    """A stream like a pipe's: text in memory, or bytes in ``encoding`` as Python would set up."""
    if encoding is None:
        return io.StringIO()
    return io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors=errors, newline="\n")


def _written(stream: io.TextIOBase) -> str:
    """What was written, read back as ``subprocess.run(text=True)`` reads a pipe."""
    if isinstance(stream, io.TextIOWrapper):
        stream.flush()
        raw = stream.buffer
        assert isinstance(raw, io.BytesIO)
        return raw.getvalue().decode(locale.getpreferredencoding(False))
    assert isinstance(stream, io.StringIO)
    return stream.getvalue()


def neta_in_process(
    *args: str,
    input_text: str | None = None,
    cwd: object = None,
    env: dict[str, str] | None = None,
    encoding: str | None = None,
    together: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``neta ARGS`` in this process, as ``subprocess.run`` would report it.

    For the tests where no process boundary is the point: the same ``main``, environment,
    working directory and standard streams, without starting Python again. ``encoding`` gives
    stdout and stderr that encoding, as ``PYTHONIOENCODING`` does for a real process (stdout
    strict, stderr ``backslashreplace``). ``together`` sends stderr into stdout, as
    ``stderr=subprocess.STDOUT`` does, so their order shows.
    """
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    streams = (sys.stdin, sys.stdout, sys.stderr)
    out = _output_stream(encoding, "strict")
    err = out if together else _output_stream(encoding, "backslashreplace")
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    if cwd is not None:
        os.chdir(str(cwd))
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(input_text or ""), out, err  # type: ignore[assignment]
    try:
        with _app_as_started():
            main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    else:  # pragma: no cover - main always exits
        code = -1
    finally:
        sys.stdin, sys.stdout, sys.stderr = streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    stderr = "" if together else _written(err)
    return subprocess.CompletedProcess(["neta", *args], code, _written(out), stderr)
