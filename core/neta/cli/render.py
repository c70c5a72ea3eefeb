"""Showing a run's events in the terminal with rich (the core never prints; this does).

Also what a run refused (``denial_lines``) and text shown whole, such as what a call
waiting for approval would do (``text_block``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from neta.cli.sanitize import sanitize_markup
from neta.events import (
    ClarifyRequest,
    ProviderRetry,
    RunFinished,
    RunStarted,
    TextDelta,
    TodoUpdate,
    ToolCallStart,
    ToolProgress,
    ToolResultEvent,
)
from neta.permissions import Denial, allow_rules_for
from neta.terminal_text import sanitize
from neta.truncation import one_line

_STATUS_MARK = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}
_PREVIEW_LINES = 8

QUIET_SECONDS = 0.5
"""How long the model may be silent before a terminal shows the spinner (no flicker before)."""

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class EventRenderer:
    """Renders events as they arrive: streamed text, tool calls and results, the todo list.

    Tool calls, results, todo panels and notes go to ``console`` (standard error by default),
    so that standard output holds the answer alone. Streamed text goes to standard output
    when that is a terminal (the answer is then not printed again: ``answer_on_stdout``),
    else to ``console`` as progress.

    On a terminal it also shows, while the model has been silent for ``quiet`` seconds, a
    spinner line that counts the wait ("⠋ waiting for the model (45 s)…") when ``tick`` is
    called (``keep_waiting_notice`` calls it often); the next event clears that line.
    """

    def __init__(
        self,
        console: Console | None = None,
        *,
        text_console: Console | None = None,
        show_text: bool = True,
        quiet: float = QUIET_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console or Console(stderr=True, highlight=False)
        if text_console is None:
            stdout = Console(highlight=False)
            text_console = stdout if console is None and stdout.is_terminal else self.console
        self.text_console = text_console
        self.show_text = show_text
        self.quiet = quiet
        self._clock = clock
        self._in_text = False
        self._running_calls = 0
        self._waiting_since: float | None = None  # the model was asked and said nothing yet
        self._notice_shown = False
        self._frame = 0
        self._todo_revision = -1
        self._list_shown_by_call = False  # the one running call's todo list is on screen

    @property
    def answer_on_stdout(self) -> bool:
        """Whether streamed text reached standard output (so the answer is there already)."""
        return self.show_text and self.text_console is not self.console

    def tick(self) -> None:
        """Show or update the waiting line, if the model has been silent long enough."""
        since = self._waiting_since
        if since is None or self._in_text or not self.console.is_terminal:
            return
        waited = self._clock() - since
        if waited < self.quiet:
            return
        frame = _SPINNER[self._frame % len(_SPINNER)]
        self._frame += 1
        self.console.file.write(f"\r\x1b[2K{frame} waiting for the model ({waited:.0f} s)…")
        self.console.file.flush()
        self._notice_shown = True

    def _track(self, event: Any) -> None:
        if self._notice_shown:
            self.console.file.write("\r\x1b[2K")
            self._notice_shown = False
        if getattr(event, "agent_id", None):
            return  # a sub-agent's events: its parent waits for a tool, not for the model
        if isinstance(event, ToolCallStart):
            self._running_calls += 1
        elif isinstance(event, ToolResultEvent):
            self._running_calls = max(0, self._running_calls - 1)
        if isinstance(event, RunFinished):
            self._waiting_since, self._running_calls = None, 0
        elif isinstance(event, RunStarted | ToolResultEvent) and self._running_calls == 0:
            self._waiting_since = self._clock()
        elif isinstance(event, TextDelta | ToolCallStart):
            self._waiting_since = None

    def __call__(self, event: Any) -> None:
        """Render one event."""
        self._track(event)
        prefix = (
            f"[magenta]\\[{event.agent_id[:8]}][/] " if getattr(event, "agent_id", None) else ""
        )
        if isinstance(event, TextDelta):
            if self.show_text and not prefix:
                # as written (unwrapped, not parsed) but for what the terminal would obey
                self.text_console.out(sanitize(event.text), end="", highlight=False)
                self._in_text = True
            return
        self._end_text()
        if isinstance(event, ToolCallStart):
            preview = escape(call_preview(event.arguments))
            name = sanitize_markup(event.name)
            self.console.print(f"{prefix}[cyan]→ {name}[/] [dim]{preview}[/]")
        elif isinstance(event, ToolResultEvent):
            mark = Text.from_markup(f"{prefix}{'[red]✗[/]' if event.is_error else '[green]✓[/]'} ")
            content = event.content
            if self._list_shown_by_call and not prefix and not event.is_error:
                content = content.split("\n", 1)[0]  # the list itself is in the panel above
            self._list_shown_by_call = False
            self.console.print(mark + result_preview(content))
        elif isinstance(event, TodoUpdate):
            if event.revision != self._todo_revision:  # the same list, told twice, shows once
                self._todo_revision = event.revision
                self.console.print(_todo_table(event))
                # with one call running, its result repeats the list: that shows one line only
                self._list_shown_by_call = not prefix and self._running_calls == 1
        elif isinstance(event, ClarifyRequest):
            self.console.print(f"{prefix}[yellow]? {sanitize_markup(event.question)}[/]")
        elif isinstance(event, ToolProgress):
            self.console.print(f"{prefix}[dim]… {sanitize_markup(progress_line(event))}[/]")
        elif isinstance(event, ProviderRetry):
            self.console.print(f"{prefix}[yellow]{sanitize_markup(retry_line(event))}[/]")
        elif isinstance(event, RunFinished) and prefix and event.outcome != "completed":
            # a sub-agent's end; the top-level run's end is told once, by the command
            reason = sanitize_markup(event.reason)
            self.console.print(f"{prefix}[red]run ended: {event.outcome}[/] {reason}")

    def finish_line(self) -> None:
        """End a line of streamed text, if one is open (before printing something else)."""
        self._end_text()

    def _end_text(self) -> None:
        if self._in_text:
            self.text_console.print()
            self._in_text = False


def call_preview(arguments: str, *, lines: int = _PREVIEW_LINES, width: int = 160) -> str:
    """A tool call's arguments as the user reads them: whitespace and indentation kept.

    Short values stay on the call's line (``path='a.py'``); a value of several lines (a
    patch's ``old_string``) follows, verbatim and indented, cut after ``lines`` lines.
    What a terminal would obey is shown instead (``sanitize``): the text is safe to print.
    """
    try:
        parsed = json.loads(arguments)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or not parsed:
        return one_line(sanitize(arguments), width)
    inline: list[str] = []
    blocks: list[str] = []
    for key, value in parsed.items():
        name = sanitize(key)
        if isinstance(value, str) and "\n" in value:
            body = sanitize(value).splitlines()  # a lone carriage return is shown, not a break
            shown = "\n".join(f"    {line}" for line in body[:lines])
            more = f"\n    … {len(body) - lines} more lines" if len(body) > lines else ""
            blocks.append(f"\n  {name}:\n{shown}{more}")
        else:  # repr and json.dumps escape every control character
            text = repr(value) if isinstance(value, str) else json.dumps(value)
            inline.append(f"{name}={text if len(text) <= width else text[: width - 1] + '…'}")
    return " ".join(inline) + "".join(blocks)


def progress_line(event: ToolProgress) -> str:
    """``index 3/10 (30%) scanning``: what a ``tool_progress`` event says."""
    done = f"{event.progress:g}"
    if event.total:
        done += f"/{event.total:g} ({event.progress / event.total:.0%})"
    return " ".join(part for part in (event.name, done, one_line(event.message, 160)) if part)


def retry_line(event: ProviderRetry) -> str:
    """``rate limited, retrying in 4 s (try 2 of 4)``: what a ``provider_retry`` event says."""
    delay = f"{event.delay:.0f}" if event.delay >= 1 else f"{event.delay:.1f}"
    return f"{event.reason}, retrying in {delay} s (try {event.attempt + 1} of {event.max_tries})"


def _todo_table(event: TodoUpdate) -> Table:
    table = Table(
        title=f"todo (rev {event.revision})", box=None, show_header=False, title_justify="left"
    )
    for item in event.todos:
        status = str(item.get("status", ""))
        style = {"completed": "green", "in_progress": "bold yellow", "cancelled": "dim"}.get(
            status, ""
        )
        mark = _STATUS_MARK.get(status, "[?]")
        content = sanitize_markup(str(item.get("content", "")))
        table.add_row(escape(mark), f"[{style}]{content}[/]" if style else content)
    return table


_DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "cyan"), ("+", "green"), ("-", "red"))


def _is_diff(text: str) -> bool:
    return "\n@@ " in text or text.startswith("--- ")


def _line_style(line: str, is_diff: bool, plain: str = "dim") -> str:
    if not is_diff:
        return plain
    return next((style for mark, style in _DIFF_STYLES if line.startswith(mark)), plain)


def result_preview(text: str) -> Text:
    """A tool result's first lines, made safe to show; a unified diff's lines coloured."""
    preview = Text()
    text = sanitize(text)
    is_diff = _is_diff(text)
    for number, line in enumerate(_preview(text).split("\n")):
        if number:
            preview.append("\n")
        body = line[2:] if number else line  # continuation lines are indented by two
        preview.append(line, style=_line_style(body, is_diff))
    return preview


def text_block(text: str, *, lines: int, indent: str = "    ") -> Text:
    """``text`` made safe to show, each line indented, cut after ``lines`` lines (said so).

    A unified diff's lines are coloured; other text is shown plain.
    """
    text = sanitize(text)
    is_diff = _is_diff(text)
    body = text.splitlines() or [""]
    block = Text()
    for number, line in enumerate(body[:lines]):
        if number:
            block.append("\n")
        block.append(indent + line, style=_line_style(line, is_diff, plain=""))
    if len(body) > lines:
        block.append(f"\n{indent}… {len(body) - lines} more lines not shown", style="yellow")
    return block


NO_ONE_TO_ASK = "no one to ask"
"""``Denial.by`` for a call that needed approval where nobody could be asked."""


def denial_lines(denials: Sequence[Denial], workspace: Path) -> list[str]:
    """What a run refused, for a person: ``denied: TOOL ARGUMENT — reason (by)`` each.

    When nobody could be asked, a last line says which ``--allow`` rules would let those
    calls run. Everything the model wrote goes through ``sanitize``.
    """
    lines = []
    rules: list[str] = []
    unattended = False
    for denial in denials:
        shown = one_line(sanitize(_argument(denial.arguments)), 160)
        unasked = denial.by == NO_ONE_TO_ASK
        by = "nobody could be asked" if unasked else f"by {sanitize(denial.by)}"
        lines.append(f"denied: {sanitize(denial.tool)} {shown} — {sanitize(denial.reason)} ({by})")
        if unasked:
            unattended = True
            rules += allow_rules_for(denial.tool, denial.arguments, workspace)
    if unattended:
        flags = " ".join(f"--allow {shlex.quote(rule)}" for rule in dict.fromkeys(rules))
        allow = f"{sanitize(flags)}, or " if flags else ""
        lines.append(
            f"to let them run: {allow}--mode auto; at a terminal, without --no-input or "
            "--json, you are asked"
        )
    return lines


def _argument(arguments: Mapping[str, Any]) -> str:
    """What a call is about: a command, a path, else its arguments as JSON."""
    for key in ("command", "path"):
        value = arguments.get(key)
        if isinstance(value, str):
            return value
    return json.dumps(dict(arguments), ensure_ascii=False, default=str)


def _preview(text: str) -> str:
    lines = text.splitlines() or [""]
    shown = "\n  ".join(lines[:_PREVIEW_LINES])
    more = len(lines) - _PREVIEW_LINES
    return shown + (f"\n  … {more} more lines" if more > 0 else "")


@contextlib.asynccontextmanager
async def keep_waiting_notice(
    renderer: EventRenderer, interval: float = 0.1
) -> AsyncIterator[None]:
    """While the body runs, have ``renderer`` update its waiting line every ``interval`` s."""
    if not renderer.console.is_terminal:
        yield
        return

    async def ticking() -> None:
        while True:
            await asyncio.sleep(interval)
            renderer.tick()

    ticker = asyncio.get_running_loop().create_task(ticking())
    try:
        yield
    finally:
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker
