"""Showing a huge diff in the user's pager (``$PAGER``, else ``less``), at a terminal only."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

PAGE_LINES = 200
"""A diff longer than this many lines goes to the pager, when there is a terminal for it."""

Pager = Callable[[str], bool]
"""Shows text (ANSI colours kept) and returns when the user leaves it; whether it was shown."""

_CANNOT_RUN = (126, 127)  # the shell's "not executable" and "not found"


def terminal_pager() -> Pager | None:
    """``page`` when standard input, output and error are all terminals, else ``None``.

    The pager writes to standard output and reads keys from the terminal: with either one
    redirected (``> answer.txt``, a pipe, a CI log) nothing is paged, and the text is printed.
    """
    streams = (sys.stdin, sys.stdout, sys.stderr)
    return page if all(s is not None and s.isatty() for s in streams) else None


def page(text: str) -> bool:
    """Show ``text`` in ``$PAGER`` (``less`` when unset; ``LESS`` defaults to ``FRX``).

    The run waits until the pager is left (``q``). Returns ``False`` when the pager cannot be
    started, so that the caller prints the text instead.
    """
    command = os.environ.get("PAGER", "").strip() or "less"
    env = {**os.environ, "LESS": os.environ.get("LESS") or "FRX"}
    sys.stdout.flush()
    sys.stderr.flush()
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        done = subprocess.run(  # the user's own setting, run by the shell as git runs it
            command, shell=True, input=text.encode(encoding, "replace"), env=env, check=False
        )
    except OSError:
        return False
    return done.returncode not in _CANNOT_RUN
