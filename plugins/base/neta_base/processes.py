"""Finding and killing the processes a session's ``bash`` commands started, escapes included.

Every command runs with two marks in its environment: one for its session and one for the
call. Children inherit them through ``setsid``, ``nohup`` and double forks, which all escape
a process-group kill, so the sweep reads ``/proc/<pid>/environ`` of every process instead:
whatever carries the mark is stopped (so it cannot fork away meanwhile), then killed.

Only sessions that ran a command in this process are swept (``sweep_session``): reading
every process's environment takes milliseconds, and a host ends many sessions.

Limits: Linux only (elsewhere only the process group is killed), and a program that starts
a child with a scrubbed environment (``env -i ...``) hides that child from the sweep.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time

import neta

SESSION_VARIABLE = "NETA_BASH_SESSION"
"""Environment variable marking every process a session's commands start."""

CALL_VARIABLE = "NETA_BASH_CALL"
"""Environment variable marking every process one ``bash`` call starts."""

SWEEP_SECONDS = 2.0
"""How long one sweep may keep finding newly forked processes before it gives up."""

_HOST = secrets.token_hex(6)  # two hosts' sessions of the same id never share a mark
_PROC = "/proc"
_STARTED: set[str] = set()  # session marks of the sessions that started a command here


def session_mark(session: neta.SessionContext) -> str:
    """The value of ``SESSION_VARIABLE`` for ``session``'s commands."""
    return f"{_HOST}.{session.session_id}"


def note_started(mark: str) -> None:
    """Remember that a command carrying the session mark ``mark`` is being started."""
    _STARTED.add(mark)


def sweep_session(mark: str, *, ending: bool) -> list[int]:
    """Kill what the session with ``mark`` started, if it started anything in this process.

    ``ending``: the session ends, so its mark is forgotten too.

    Returns:
        The pids killed.
    """
    if mark not in _STARTED:
        return []
    if ending:
        _STARTED.discard(mark)
    return kill_marked(SESSION_VARIABLE, mark)


def call_mark() -> str:
    """A fresh value of ``CALL_VARIABLE`` for one call."""
    return secrets.token_hex(8)


def kill_marked(variable: str, value: str) -> list[int]:
    """Stop, then kill, every process whose environment holds ``variable=value``.

    Returns:
        The pids killed.
    """
    needle = f"\0{variable}={value}\0".encode()
    stopped: set[int] = set()
    deadline = time.monotonic() + SWEEP_SECONDS
    while time.monotonic() < deadline:
        found = set(_marked(needle)) - stopped
        if not found:
            break
        for pid in found:
            _signal(pid, signal.SIGSTOP)
        stopped |= found
    for pid in stopped:
        _signal(pid, signal.SIGKILL)
    return sorted(stopped)


def _marked(needle: bytes) -> list[int]:
    own = os.getpid()
    found = []
    try:
        entries = os.listdir(_PROC)
    except OSError:  # no /proc: nothing to sweep
        return []
    for name in entries:
        if not name.isdigit() or int(name) == own:
            continue
        try:
            with open(f"{_PROC}/{name}/environ", "rb") as handle:
                environ = b"\0" + handle.read() + b"\0"
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if needle in environ:
            found.append(int(name))
    return found


def _signal(pid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)
