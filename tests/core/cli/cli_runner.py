"""Run ``neta`` in-process, as ``main`` does, with its own stdin, stdout and stderr."""

from __future__ import annotations

import io
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
