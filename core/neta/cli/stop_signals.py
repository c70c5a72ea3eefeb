"""Ctrl-C, SIGTERM and SIGHUP: the one way ``neta run`` and ``neta chat`` are stopped.

Whichever of them comes (a user's Ctrl-C, a ``kill``, a supervisor stopping the process, a
terminal closed), the run is cancelled and its tools with it (the base plugin ends a cancelled
run's processes), the conversation is stored, how it ended is printed, and the process exits
128 + the signal's number, as shells report a process a signal ended: 130, 143, 129.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

STOP_SIGNALS: tuple[int, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""The signals that stop a run: Ctrl-C, a polite ``kill``, a closed terminal."""

INTERRUPTED = 128 + signal.SIGINT
"""Exit status after Ctrl-C (130)."""

_WHY: dict[int, str] = {
    signal.SIGINT: "interrupted by Ctrl-C",
    signal.SIGTERM: "stopped by SIGTERM",
}
if hasattr(signal, "SIGHUP"):
    _WHY[signal.SIGHUP] = "stopped by SIGHUP (the terminal closed)"


def stopped_because(signum: int) -> str:
    """Why a run that ``signum`` stopped ended: ``stopped by SIGTERM``."""
    return _WHY.get(signum, f"stopped by signal {signum}")


def exit_status(signum: int) -> int:
    """The exit status of a command ``signum`` stopped: 128 + its number."""
    return 128 + signum


def farewell(signum: int) -> str:
    """The line printed when leaving: ``Interrupted.`` after Ctrl-C, else why."""
    if signum == signal.SIGINT:
        return "Interrupted."
    why = stopped_because(signum)
    return f"{why[0].upper()}{why[1:]}."


@dataclass
class Stop:
    """The first stop signal that came, if any (``note`` it from a handler)."""

    signum: int | None = None

    def note(self, signum: int) -> None:
        """Remember ``signum`` unless an earlier signal is remembered already."""
        if self.signum is None:
            self.signum = signum


@contextlib.contextmanager
def on_signals(
    handle: Callable[[int], object], signals: Sequence[int] = STOP_SIGNALS
) -> Iterator[None]:
    """While inside, each of ``signals`` calls ``handle(signum)`` instead of ending the program.

    Call it in the running event loop; outside, the signals do what they did before. A signal
    the process was started ignoring stays ignored (``nohup`` ignores SIGHUP so that a closed
    terminal does not stop the command). Where the loop cannot take signal handlers (not the
    main thread, Windows) nothing changes.
    """
    loop = asyncio.get_running_loop()
    before: dict[int, Any] = {}
    try:
        for signum in signals:
            previous = signal.getsignal(signum)
            if previous == signal.SIG_IGN:
                continue
            try:
                loop.add_signal_handler(signum, handle, signum)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
                break
            before[signum] = previous
        yield
    finally:
        for signum, previous in before.items():
            loop.remove_signal_handler(signum)
            if previous is not None:  # e.g. asyncio.run's own Ctrl-C handler
                signal.signal(signum, previous)


@contextlib.contextmanager
def while_the_terminal_lasts() -> Iterator[None]:
    """Print in the body; if the terminal is gone (SIGHUP: it was closed), print nothing more.

    Standard output and error then go to the null device, so that nothing later (the flush
    at the exit included) fails on them and the exit status stays the one chosen.
    """
    try:
        yield
    except OSError:
        sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (open until the exit)
