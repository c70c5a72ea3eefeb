"""Showing a run's events in the terminal with rich (the core never prints; this does)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from neta.events import (
    ClarifyRequest,
    ProviderRetry,
    RunFinished,
    TextDelta,
    TodoUpdate,
    ToolCallStart,
    ToolResultEvent,
)
from neta.truncation import one_line

_STATUS_MARK = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}
_PREVIEW_LINES = 8


class EventRenderer:
    """Renders events as they arrive: streamed text, tool calls and results, the todo list."""

    def __init__(self, console: Console | None = None, *, show_text: bool = True) -> None:
        self.console = console or Console(highlight=False)
        self.show_text = show_text
        self._in_text = False

    def __call__(self, event: Any) -> None:
        """Render one event."""
        prefix = (
            f"[magenta]\\[{event.agent_id[:8]}][/] " if getattr(event, "agent_id", None) else ""
        )
        if isinstance(event, TextDelta):
            if self.show_text and not prefix:
                self.console.out(event.text, end="", highlight=False)  # verbatim, unwrapped
                self._in_text = True
            return
        self._end_text()
        if isinstance(event, ToolCallStart):
            self.console.print(
                f"{prefix}[cyan]→ {escape(event.name)}[/] "
                f"[dim]{escape(one_line(event.arguments, 160))}[/]"
            )
        elif isinstance(event, ToolResultEvent):
            mark = "[red]✗[/]" if event.is_error else "[green]✓[/]"
            self.console.print(f"{prefix}{mark} [dim]{escape(_preview(event.content))}[/]")
        elif isinstance(event, TodoUpdate):
            self.console.print(_todo_table(event))
        elif isinstance(event, ClarifyRequest):
            self.console.print(f"{prefix}[yellow]? {escape(event.question)}[/]")
        elif isinstance(event, ProviderRetry):
            self.console.print(f"{prefix}[yellow]{escape(retry_line(event))}[/]")
        elif isinstance(event, RunFinished) and event.outcome not in (
            "completed",
            "awaiting_input",
        ):
            self.console.print(f"{prefix}[red]run ended: {event.outcome}[/] {escape(event.reason)}")

    def _end_text(self) -> None:
        if self._in_text:
            self.console.print()
            self._in_text = False


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
        table.add_row(
            escape(mark),
            f"[{style}]{escape(str(item.get('content', '')))}[/]"
            if style
            else escape(str(item.get("content", ""))),
        )
    return table


def _preview(text: str) -> str:
    lines = text.splitlines() or [""]
    shown = "\n  ".join(lines[:_PREVIEW_LINES])
    more = len(lines) - _PREVIEW_LINES
    return shown + (f"\n  … {more} more lines" if more > 0 else "")
