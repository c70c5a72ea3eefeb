"""The terminal's clarify callback: show the question and its numbered choices, read an answer.

Input is read in a worker thread (``asyncio.to_thread``) so the event loop keeps running while
the user thinks. On a terminal the thread polls, so when the wait is abandoned (the clarify
timeout, Ctrl-C) it stops instead of swallowing the next line the user types.
"""

from __future__ import annotations

import asyncio
import os
import select
import sys
import threading
from collections.abc import Sequence
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from neta.session import ClarifyFn

_POLL_SECONDS = 0.1


def terminal_clarify(*, console: Console | None = None, stdin: TextIO | None = None) -> ClarifyFn:
    """A clarify callback that asks at the terminal.

    The question is printed with its choices numbered from 1, then "or type your own answer".
    A number picks that choice; any other text is the answer as typed. Empty lines are ignored;
    at end of input the answer is empty.

    Args:
        console: where the question is printed (default: standard output).
        stdin: where the answer is read (default: ``sys.stdin`` at the time of asking).
    """
    out = console or Console(highlight=False)

    async def ask(question: str, choices: Sequence[str] | None) -> str:
        listed = list(choices or ())
        out.print(f"[yellow]? {escape(question)}[/]")
        for number, choice in enumerate(listed, start=1):
            out.print(f"  {number}. {escape(choice)}")
        if listed:
            out.print("  [dim]or type your own answer[/]")
        try:
            while True:
                out.print("answer> ", end="")
                line = await _read_line(stdin if stdin is not None else sys.stdin)
                if line is None:
                    out.print()
                    return ""
                if line.strip():
                    return _pick(line.strip(), listed)
        except asyncio.CancelledError:
            out.print("\n[dim](no answer in time; the agent continues without one)[/]")
            raise

    return ask


def _pick(text: str, choices: list[str]) -> str:
    """The choice numbered ``text``, or ``text`` itself when it is not such a number."""
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1]
    return text


async def _read_line(stream: TextIO) -> str | None:
    """The next line of ``stream`` without its newline; ``None`` at end of input."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(_blocking_read_line, stream, stop)
    finally:
        stop.set()


def _blocking_read_line(stream: TextIO, stop: threading.Event) -> str | None:
    if _pollable(stream):
        while not select.select([stream], [], [], _POLL_SECONDS)[0]:
            if stop.is_set():
                return None
    line = stream.readline()
    return line.rstrip("\r\n") if line else None


def _pollable(stream: TextIO) -> bool:
    """Whether waiting on ``stream`` can be polled: a terminal, on a system with ``select``."""
    if os.name == "nt":
        return False
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return stream.isatty()
