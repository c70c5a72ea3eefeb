"""Showing a run's events in the terminal with rich (the core never prints; this does).

Also what a run refused (``denial_lines``) and text shown whole, such as what a call
waiting for approval would do (``text_block``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from neta.cli.pager import PAGE_LINES, Pager, terminal_pager
from neta.cli.sanitize import sanitize_markup
from neta.events import (
    ClarifyRequest,
    ModelFallback,
    PermissionDecided,
    ProviderRetry,
    RunFinished,
    RunStarted,
    TextDelta,
    TodoUpdate,
    ToolCallStart,
    ToolOutput,
    ToolProgress,
    ToolResultEvent,
)
from neta.permissions import Denial, allow_rules_for
from neta.terminal_text import sanitize
from neta.truncation import one_line

_STATUS_MARK = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}
_PREVIEW_LINES = 8
_LIST_TOOL = "todo"  # the planning toolset's: the todo list it writes is the whole story
_MORE = "-v shows all"

QUIET_SECONDS = 0.5
"""How long the model may be silent, or a tool run, before a terminal shows the wait."""

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_ANSWERED = ("completed", "awaiting_input")  # outcomes whose text the command prints itself


@dataclass
class _HeldCall:
    """A call to the todo tool, shown by the list it writes unless it writes none."""

    line: str
    agent_id: str | None
    listed: bool = False


class EventRenderer:
    """Renders events as they arrive: streamed text, tool calls and results, the todo list.

    Tool calls, results, todo panels and notes go to ``console`` (standard error by default),
    so that standard output holds the answer alone. Streamed text goes to standard output
    when that is a terminal (the answer is then not printed again: ``answer_on_stdout``),
    else to ``console`` as progress; with ``answer_printed`` (the command prints the answer
    on standard output at the end) and ``console`` not a terminal, the final reply is left
    out there, so that ``2>&1`` shows it once.

    A result that is a diff (``patch``), or carries one (``data["diff"]``: ``write_file``), is
    shown whole; longer than ``PAGE_LINES``, it goes to ``pager`` when there is one. Other
    results show their first lines, all of them when ``verbose``. A call to the todo tool
    shows as the list it writes. On a terminal, what a running ``bash`` writes is shown as it
    comes (``tool_output`` events).

    On a terminal it also shows, while the model has been silent or a tool has run for
    ``quiet`` seconds, a spinner line that counts the wait ("⠋ waiting for the model (45 s)…",
    "⠋ running bash (12 s)…") when ``tick`` is called (``keep_waiting_notice`` calls it
    often), unless ``asking()`` says a question waits for an answer; the next event clears it.
    """

    def __init__(
        self,
        console: Console | None = None,
        *,
        text_console: Console | None = None,
        show_text: bool = True,
        quiet: float = QUIET_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        verbose: bool = False,
        answer_printed: bool = False,
        pager: Pager | None = None,
        asking: Callable[[], bool] | None = None,
    ) -> None:
        self.console = console or Console(stderr=True, highlight=False)
        if text_console is None:
            stdout = Console(highlight=False)
            text_console = stdout if console is None and stdout.is_terminal else self.console
        self.text_console = text_console
        self.show_text = show_text
        self.quiet = quiet
        self.verbose = verbose
        self._clock = clock
        self._pager = pager
        self._asking = asking
        self._in_text = False
        self._running: dict[str, tuple[str, float | None]] = {}  # call id: name, allowed at
        self._waiting_since: float | None = None  # the model was asked and said nothing yet
        self._notice_shown = False
        self._frame = 0
        self._todo_revision = -1
        self._held: dict[str, _HeldCall] = {}  # todo calls, by id, until their result
        # off a terminal, text is kept until it proves not to be the final reply
        self._keep_text = answer_printed and text_console is self.console
        self._keep_text = self._keep_text and not self.console.is_terminal
        self._unsaid: list[str] = []
        self._streamed: dict[str, str] = {}  # what running tools wrote, by name (top level)
        self._partial = ""  # the streamed line not ended yet

    @property
    def answer_on_stdout(self) -> bool:
        """Whether streamed text reached standard output (so the answer is there already)."""
        return self.show_text and self.text_console is not self.console

    def tick(self) -> None:
        """Show or update the waiting line, if the model or a tool has been long enough."""
        if self._in_text or not self.console.is_terminal:
            return
        if self._asking is not None and self._asking():
            return
        started = [at for _, at in self._running.values() if at is not None]
        if started:
            running = self._running.values()
            names = dict.fromkeys(sanitize(name) for name, at in running if at is not None)
            what, since = f"running {', '.join(names)}", min(started)
        elif self._waiting_since is not None and not self._running:
            what, since = "waiting for the model", self._waiting_since
        else:
            return
        waited = self._clock() - since
        if waited < self.quiet:
            return
        frame = _SPINNER[self._frame % len(_SPINNER)]
        self._frame += 1
        self.console.file.write(f"\r\x1b[2K{frame} {what} ({waited:.0f} s)…")
        self.console.file.flush()
        self._notice_shown = True

    def _track(self, event: Any) -> None:
        if self._notice_shown:
            self.console.file.write("\r\x1b[2K")
            self._notice_shown = False
        if getattr(event, "agent_id", None):
            return  # a sub-agent's events: its parent waits for a tool, not for the model
        if isinstance(event, ToolCallStart):
            self._running[event.call_id] = (event.name, None)
        elif isinstance(event, PermissionDecided) and event.call_id in self._running:
            if event.action == "allow":  # it runs from now (after a question, perhaps)
                self._running[event.call_id] = (event.name, self._clock())
        elif isinstance(event, ToolResultEvent):
            self._running.pop(event.call_id, None)
        if isinstance(event, RunFinished):
            self._waiting_since = None
            self._running.clear()
        elif isinstance(event, RunStarted | ToolResultEvent) and not self._running:
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
                if self._keep_text:
                    self._unsaid.append(event.text)
                    return
                # as written (unwrapped, not parsed) but for what the terminal would obey
                self.text_console.out(sanitize(event.text), end="", highlight=False)
                self._in_text = True
            return
        if isinstance(event, RunFinished) and not prefix:
            self._streamed.clear()  # every call's result came before: nothing is running
            self._partial = ""
            if event.outcome in _ANSWERED:  # the final reply: the command prints it on stdout
                self._unsaid.clear()
        self._say_unsaid()
        self._end_text()
        if isinstance(event, ToolCallStart):
            self._call_line(event, prefix)
        elif isinstance(event, ToolOutput):
            if not prefix and self.console.is_terminal:
                self._stream(event)
        elif isinstance(event, ToolResultEvent):
            self._result(event, prefix)
        elif isinstance(event, TodoUpdate):
            callers = (c for c in self._held.values() if c.agent_id == event.agent_id)
            caller = next((c for c in callers if not c.listed), None)
            if caller is not None:
                caller.listed = True
            if event.revision != self._todo_revision:  # the same list, told twice, shows once
                self._todo_revision = event.revision
                self.console.print(_todo_table(event))
        elif isinstance(event, ClarifyRequest):
            self.console.print(f"{prefix}[yellow]? {sanitize_markup(event.question)}[/]")
        elif isinstance(event, ToolProgress):
            self.console.print(f"{prefix}[dim]… {sanitize_markup(progress_line(event))}[/]")
        elif isinstance(event, ProviderRetry):
            self.console.print(f"{prefix}[yellow]{sanitize_markup(retry_line(event))}[/]")
        elif isinstance(event, ModelFallback):
            self.console.print(f"{prefix}[yellow]{sanitize_markup(fallback_line(event))}[/]")
        elif isinstance(event, RunFinished) and prefix and event.outcome != "completed":
            # a sub-agent's end; the top-level run's end is told once, by the command
            reason = sanitize_markup(event.reason)
            self.console.print(f"{prefix}[red]run ended: {event.outcome}[/] {reason}")

    def finish_line(self) -> None:
        """End a line of streamed text, if one is open (before printing something else)."""
        self._say_unsaid()
        self._end_text()

    def _call_line(self, event: ToolCallStart, prefix: str) -> None:
        lines, width = (sys.maxsize, None) if self.verbose else (_PREVIEW_LINES, 160)
        preview = escape(call_preview(event.arguments, lines=lines, width=width))
        line = f"{prefix}[cyan]→ {sanitize_markup(event.name)}[/] [dim]{preview}[/]"
        if event.name == _LIST_TOOL:  # shown by the list it writes: printed if it writes none
            self._held[event.call_id] = _HeldCall(line, event.agent_id)
        else:
            self.console.print(line)

    def _stream(self, event: ToolOutput) -> None:
        """Print the lines a running tool wrote; a line not ended yet waits for its end."""
        self._streamed[event.name] = self._streamed.get(event.name, "") + event.text
        *lines, self._partial = (self._partial + event.text).split("\n")
        for line in lines:
            self.console.print(Text("  " + sanitize(line), style="dim"))

    def _result(self, event: ToolResultEvent, prefix: str) -> None:
        held = self._held.pop(event.call_id, None)
        if held is not None:
            if held.listed and not event.is_error:
                return  # the list it wrote says it all
            self.console.print(held.line)
        mark = Text.from_markup(f"{prefix}{'[red]✗[/]' if event.is_error else '[green]✓[/]'} ")
        content = event.content
        streamed = None if prefix else self._streamed.pop(event.name, None)
        if streamed is not None:
            if self._partial:
                self.console.print(Text("  " + sanitize(self._partial), style="dim"))
                self._partial = ""
            if content.startswith(streamed):  # its lines are on screen: what came after
                content = content[len(streamed) :].lstrip("\n")
        diff = event.data.get("diff")
        if isinstance(diff, str) and diff:  # the whole diff, then what else the result says
            content = _besides_diff(content)
        block = result_preview(content, lines=None if self.verbose else _PREVIEW_LINES)
        if isinstance(diff, str) and diff:
            block.append("\n")
            block.append_text(text_block(diff, lines=sys.maxsize, indent="  "))
        lines = block.plain.count("\n") + 1
        if self._pager is not None and lines > PAGE_LINES and _has_diff(content, diff):
            first = block.plain.split("\n", 1)[0]
            self.console.print(mark + Text(first) + Text(f"  ({lines} lines: in the pager)", "dim"))
            with self.console.capture() as captured:
                self.console.print(mark + block)
            if self._pager(captured.get()):
                return
        self.console.print(mark + block)

    def _say_unsaid(self) -> None:
        if self._unsaid:
            self.text_console.out(sanitize("".join(self._unsaid)), end="", highlight=False)
            self._unsaid.clear()
            self._in_text = True

    def _end_text(self) -> None:
        if self._in_text:
            self.text_console.print()
            self._in_text = False


def terminal_renderer(
    *, verbose: bool = False, asking: Callable[[], bool] | None = None
) -> EventRenderer:
    """The renderer of ``neta run`` and ``neta chat``.

    Progress goes to standard error, the answer once to standard output, and a huge diff to
    the pager when there is a terminal for it.
    """
    return EventRenderer(
        verbose=verbose, answer_printed=True, pager=terminal_pager(), asking=asking
    )


def call_preview(arguments: str, *, lines: int = _PREVIEW_LINES, width: int | None = 160) -> str:
    """A tool call's arguments as the user reads them: whitespace and indentation kept.

    Short values stay on the call's line (``path='a.py'``), cut at ``width`` characters
    (``None``: never); a value of several lines (a patch's ``old_string``) follows, verbatim
    and indented, cut after ``lines`` lines. What a terminal would obey is shown instead
    (``sanitize``): the text is safe to print.
    """
    width = width or sys.maxsize
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
            cut = len(body) - lines
            more = f"\n    … {cut} more lines ({_MORE})" if cut > 0 else ""
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


def fallback_line(event: ModelFallback) -> str:
    """``anthropic:claude-x failed (overloaded); asking openai:gpt-4o``: a ``model_fallback``."""
    return f"{event.failed} failed ({event.reason}); asking {event.model}"


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


_IN_DIFF = (" ", "+", "-", "@@", "\\", "... ")  # how a line of a diff (or its cut marker) starts
_DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "cyan"), ("+", "green"), ("-", "red"))


def _is_diff(text: str) -> bool:
    return "\n@@ " in text or text.startswith("--- ")


def _besides_diff(text: str) -> str:
    """``text`` without the unified diff in it (a patch's result: its summary line)."""
    if not _is_diff(text):
        return text
    return "\n".join(line for line in text.split("\n") if line and not line.startswith(_IN_DIFF))


def _has_diff(content: str, diff: object) -> bool:
    """Whether a result is, or carries (``data["diff"]``), a diff of a file it changed."""
    return (isinstance(diff, str) and bool(diff)) or _is_diff(sanitize(content))


def _line_style(line: str, is_diff: bool, plain: str = "dim") -> str:
    if not is_diff:
        return plain
    return next((style for mark, style in _DIFF_STYLES if line.startswith(mark)), plain)


def result_preview(text: str, *, lines: int | None = _PREVIEW_LINES) -> Text:
    """A tool result's first ``lines`` lines, made safe to show; a unified diff whole, coloured.

    ``lines=None`` shows every line.
    """
    preview = Text()
    text = sanitize(text)
    is_diff = _is_diff(text)
    for number, line in enumerate(_preview(text, None if is_diff else lines).split("\n")):
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


def _preview(text: str, lines: int | None) -> str:
    body = text.splitlines() or [""]
    shown = "\n  ".join(body[:lines])
    more = len(body) - lines if lines is not None else 0
    return shown + (f"\n  … {more} more lines ({_MORE})" if more > 0 else "")


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
