"""The terminal's clarify callback: show the question and its numbered choices, read an answer.

``read_answer`` reads one line after a prompt; the approval prompt (``approval_prompt``) reads
its answers with it too.

Input is read in a daemon thread so the event loop keeps running while the user thinks. On a
terminal the thread polls, so when the wait is abandoned (the clarify timeout, Ctrl-C) it stops
instead of swallowing the next line the user types. Other input (a pipe) cannot be polled
reliably, so an abandoned read there may linger; being a daemon thread, it never keeps the
process from exiting. Closed or missing input counts as the end of input.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import sys
import threading
from collections.abc import Sequence
from typing import TextIO

from rich.console import Console

from neta.cli.sanitize import sanitize_markup
from neta.session import ClarifyFn

_POLL_SECONDS = 0.1


class QuestionInterrupt:
    """Lets Ctrl-C cancel just the question being asked, rather than the whole turn."""

    def __init__(self) -> None:
        self._reading: asyncio.Future[str | None] | None = None

    @property
    def asking(self) -> bool:
        """Whether a question waits for an answer now (a status line must not cover it)."""
        return self._reading is not None and not self._reading.done()

    def cancel_question(self) -> bool:
        """Cancel the question waiting for an answer, if one is; whether one was."""
        if self._reading is None or self._reading.done():
            return False
        self._reading.cancel()
        return True


def terminal_clarify(
    *,
    console: Console | None = None,
    stdin: TextIO | None = None,
    interrupt: QuestionInterrupt | None = None,
) -> ClarifyFn:
    """A clarify callback that asks at the terminal.

    The question is printed with its choices numbered from 1, then "or type your own answer".
    A number picks that choice; any other text is the answer as typed. Empty lines are ignored;
    at end of input the answer is empty.

    Args:
        console: where the question is printed (default: standard output).
        stdin: where the answer is read (default: ``sys.stdin`` at the time of asking).
        interrupt: when given, its ``cancel_question`` (Ctrl-C) ends the question unanswered
            and the run goes on.
    """
    out = console or Console(highlight=False)

    async def ask(question: str, choices: Sequence[str] | None) -> str:
        listed = list(choices or ())
        clear_status_line(out)
        out.print(f"[yellow]? {sanitize_markup(question)}[/]")
        for number, choice in enumerate(listed, start=1):
            out.print(f"  {number}. {sanitize_markup(choice)}")
        if listed:
            out.print("  [dim]or type your own answer[/]")
        try:
            while True:
                try:
                    line = await read_answer(out, "answer> ", stdin=stdin, interrupt=interrupt)
                except QuestionCancelled:
                    out.print("\n[dim](question cancelled with Ctrl-C; the agent goes on)[/]")
                    return ""
                if line is None:
                    out.print()
                    return ""
                if line.strip():
                    return _pick(line.strip(), listed)
        except asyncio.CancelledError:
            out.print("\n[dim](no answer in time; the agent continues without one)[/]")
            raise

    return ask


def clear_status_line(out: Console) -> None:
    """Erase the line a running tool's timer may have left on a terminal, before asking there."""
    if out.is_terminal:
        out.file.write("\r\x1b[2K")


class QuestionCancelled(Exception):
    """Ctrl-C cancelled the question being asked (``QuestionInterrupt``), not the turn."""


async def read_answer(
    out: Console,
    prompt: str,
    *,
    stdin: TextIO | None = None,
    interrupt: QuestionInterrupt | None = None,
) -> str | None:
    """Show ``prompt`` and read the line typed after it; ``None`` at end of input.

    Args:
        out: where the prompt is shown.
        prompt: what is shown before the answer (plain text, no markup).
        stdin: where the line is read (default: ``sys.stdin`` at the time of asking).
        interrupt: when given, its ``cancel_question`` (Ctrl-C) ends the wait.

    Raises:
        QuestionCancelled: ``interrupt`` cancelled the question.
        asyncio.CancelledError: the task asking was cancelled (a timeout, the whole turn).
    """
    out.print(prompt, end="", markup=False)
    reading = asyncio.ensure_future(_read_line(stdin if stdin is not None else sys.stdin))
    if interrupt is not None:
        interrupt._reading = reading
    try:
        return await reading
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise  # the whole turn is cancelled, or the wait timed out: not only the question
        raise QuestionCancelled from None


def _pick(text: str, choices: list[str]) -> str:
    """The choice numbered ``text``, or ``text`` itself when it is not such a number."""
    if text.isdecimal() and len(text) <= 4 and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1]
    return text


async def _read_line(stream: TextIO | None) -> str | None:
    """The next line of ``stream`` without its newline; ``None`` at end of input."""
    if stream is None:
        return None
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str | None] = loop.create_future()
    stop = threading.Event()

    def read() -> None:
        try:
            outcome = _blocking_read_line(stream, stop)
        except BaseException as exc:  # handed to the waiting coroutine, which raises it
            _deliver(loop, line, None, exc)
        else:
            _deliver(loop, line, outcome, None)

    reader = threading.Thread(target=read, name="neta-clarify-input", daemon=True)
    reader.start()
    try:
        return await line
    finally:
        stop.set()
        if _pollable(stream):  # it stops within a poll: wait, so it cannot take the next line
            await asyncio.shield(asyncio.to_thread(reader.join, _POLL_SECONDS * 3))


def _deliver(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[str | None],
    line: str | None,
    error: BaseException | None,
) -> None:
    """Settle ``future`` from the reading thread, unless the wait was abandoned meanwhile."""

    def settle() -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(line)

    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
        loop.call_soon_threadsafe(settle)


def _blocking_read_line(stream: TextIO, stop: threading.Event) -> str | None:
    try:
        if _pollable(stream):
            while not select.select([stream], [], [], _POLL_SECONDS)[0]:
                if stop.is_set():
                    return None
            if stop.is_set():  # abandoned meanwhile: the line is for whoever reads next
                return None
        line = stream.readline()
    except (OSError, ValueError):  # closed, hung up or unreadable: no more input
        return None
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
