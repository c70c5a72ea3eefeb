"""Run ``neta`` in-process, as ``main`` does, with its own stdin, stdout and stderr."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

from neta.cli.app import main


@dataclass
class Done:
    code: int
    stdout: str
    stderr: str


def run_neta(capsys: pytest.CaptureFixture[str], *args: str, stdin: str = "") -> Done:
    """``neta ARGS`` with ``stdin`` piped in; the exit status and what it printed."""
    capsys.readouterr()  # what came before is not this command's
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    else:  # pragma: no cover - main always exits
        code = -1
    finally:
        sys.stdin = saved
    out, err = capsys.readouterr()
    return Done(code, out, err)


def neta_in_process(
    *args: str,
    input_text: str | None = None,
    cwd: object = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``neta ARGS`` in this process, as ``subprocess.run`` would report it.

    For the tests where no process boundary is the point: the same ``main``, environment,
    working directory and standard streams, without starting Python again.
    """
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    streams = (sys.stdin, sys.stdout, sys.stderr)
    out, err = io.StringIO(), io.StringIO()
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    if cwd is not None:
        os.chdir(str(cwd))
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(input_text or ""), out, err
    try:
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
    return subprocess.CompletedProcess(["neta", *args], code, out.getvalue(), err.getvalue())
