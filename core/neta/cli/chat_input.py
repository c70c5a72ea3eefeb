r"""How ``neta chat`` reads what the user says: prompt_toolkit on a terminal, lines otherwise.

On a terminal: line editing, history kept in ``NETA_HOME/chat_history``, Esc-Enter or a
trailing ``\\`` for a new line, Ctrl-C clears the line (at an empty prompt it leaves), Ctrl-D
at an empty prompt leaves. From a pipe: one message per line, a trailing ``\\`` joins the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from typing import Protocol

from neta.home import neta_home


class ChatInput(Protocol):
    """Reads the user's next message."""

    async def read(self, prompt: str) -> str:
        """The next message.

        Raises:
            EOFError: the user left (Ctrl-D, end of input).
            KeyboardInterrupt: Ctrl-C at an empty prompt.
        """


def chat_input() -> ChatInput:
    """A prompt_toolkit reader when standard input and output are terminals, else lines."""
    stdin, stdout = sys.stdin, sys.stdout
    if stdin is not None and stdin.isatty() and stdout is not None and stdout.isatty():
        return TerminalInput()
    return LineInput()


class LineInput:
    r"""Messages from a pipe or file: a line each; a line ending in ``\\`` continues."""

    async def read(self, prompt: str) -> str:
        """The next message (``prompt`` is not shown: nobody is looking)."""
        parts: list[str] = []
        while True:
            line = await _readline_aside()
            if line is None:
                if parts:
                    return "\n".join(parts)
                raise EOFError
            if line.endswith("\\"):
                parts.append(line[:-1])
                continue
            parts.append(line)
            return "\n".join(parts)


async def _readline_aside() -> str | None:
    """``_readline`` in a daemon thread: a read a signal abandons never holds up the exit."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str | None] = loop.create_future()

    def settle(line: str | None, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(line)

    def read() -> None:
        try:
            line, error = _readline(), None
        except Exception as exc:  # handed to the reader, as asyncio.to_thread would
            line, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
            loop.call_soon_threadsafe(settle, line, error)

    threading.Thread(target=read, name="neta-chat-input", daemon=True).start()
    return await done


def _readline() -> str | None:
    if sys.stdin is None:
        return None
    line = sys.stdin.readline()
    return line.rstrip("\r\n") if line else None


class TerminalInput:
    """Messages typed at a terminal, with prompt_toolkit's line editing and history."""

    def __init__(self) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

        bindings = KeyBindings()

        @bindings.add("enter", eager=True)
        def _enter(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            if buffer.document.is_cursor_at_the_end and buffer.text.endswith("\\"):
                buffer.delete_before_cursor(1)
                buffer.insert_text("\n")
            else:
                buffer.validate_and_handle()

        @bindings.add("escape", "enter")
        def _newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        @bindings.add("c-c")
        def _interrupt(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            if buffer.text:
                buffer.reset()
            else:
                event.app.exit(exception=KeyboardInterrupt())

        home = neta_home()
        home.mkdir(parents=True, exist_ok=True)
        self.session: PromptSession[str] = PromptSession(
            history=FileHistory(str(home / "chat_history")),
            key_bindings=bindings,
            multiline=True,
            prompt_continuation="...  ",
        )

    async def read(self, prompt: str) -> str:
        """The next message, edited at the prompt."""
        return await self.session.prompt_async(prompt)
