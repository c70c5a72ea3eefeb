"""The terminal's approve callback: what a tool call would do, then allow once, always, or deny.

A call the permission policy says to ask about (``neta.permissions``) is shown with what it
would do (the command line, the diff an edit would make) and why it asks, then numbered
choices. Nothing runs on an unclear answer: the choices are asked again. Denying asks for an
optional reason, which the model reads. Ctrl-C (in ``neta chat``) or the end of input denies.
"""

from __future__ import annotations

import asyncio
from typing import TextIO

from rich.console import Console

from neta.cli.clarify_prompt import (
    QuestionCancelled,
    QuestionInterrupt,
    clear_status_line,
    read_answer,
)
from neta.cli.render import text_block
from neta.cli.sanitize import sanitize_markup
from neta.permissions import (
    CHOICE_LABELS,
    ApprovalAnswer,
    ApprovalRequest,
    ApproveFn,
    answer_from_text,
)

PREVIEW_LINES = 120
"""Lines of a preview shown at most (a new file's whole text would fill the screen)."""


def terminal_approve(
    *,
    console: Console | None = None,
    stdin: TextIO | None = None,
    interrupt: QuestionInterrupt | None = None,
) -> ApproveFn:
    """An approve callback that asks at the terminal.

    Args:
        console: where the request is shown (default: standard error).
        stdin: where the answer is read (default: ``sys.stdin`` at the time of asking).
        interrupt: when given, its ``cancel_question`` (Ctrl-C) denies the call and the run
            goes on.
    """
    out = console or Console(stderr=True, highlight=False)

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        clear_status_line(out)  # a sub-agent asks while its parent's call is timed
        show_request(out, request)
        try:
            answer = await _choose(out, request, stdin, interrupt)
        except asyncio.CancelledError:  # the approval timed out, or the turn was cancelled
            out.print("\n[dim](no answer in time: not run)[/]")
            raise
        if answer.choice == "allow_always":
            kept = ", ".join(request.always)
            out.print(
                f"[dim]kept for this workspace: {sanitize_markup(kept)} "
                "(`neta permissions` lists it, `neta permissions remove` forgets it)[/]"
            )
        return answer

    return approve


def show_request(out: Console, request: ApprovalRequest) -> None:
    """Print the request: its title, its preview, why it asks, and the numbered choices."""
    out.print(f"[yellow]? {sanitize_markup(request.title)}[/]")
    if request.preview:
        out.print(text_block(request.preview, lines=PREVIEW_LINES))
    out.print(f"  [dim]why: {sanitize_markup(request.reason)}[/]")
    for number, choice in enumerate(request.choices, start=1):
        label = CHOICE_LABELS[choice]
        if choice == "allow_always":
            label += f" (keeps: {', '.join(request.always)})"
        out.print(f"  {number}. {sanitize_markup(label)}")


async def _choose(
    out: Console,
    request: ApprovalRequest,
    stdin: TextIO | None,
    interrupt: QuestionInterrupt | None,
) -> ApprovalAnswer:
    offered = request.choices
    while True:
        try:
            line = await read_answer(out, "choice> ", stdin=stdin, interrupt=interrupt)
        except QuestionCancelled:
            out.print("\n[dim](Ctrl-C: denied; the agent goes on)[/]")
            return ApprovalAnswer("deny")
        if line is None:
            out.print("\n[dim](end of input: denied)[/]")
            return ApprovalAnswer("deny")
        said = line.strip()
        if not said:
            continue
        answer = answer_from_text(said, offered)
        if answer.choice == "deny" and answer.reason == said:  # none of the choices
            out.print(f"[dim]Type a number from 1 to {len(offered)}.[/]")
            continue
        if answer.choice == "deny" and ":" not in said:  # `deny: REASON` gave one already
            return ApprovalAnswer("deny", await _reason(out, stdin, interrupt))
        return answer


async def _reason(out: Console, stdin: TextIO | None, interrupt: QuestionInterrupt | None) -> str:
    """Why the user denies, for the model (empty: no reason given)."""
    out.print("  [dim]why not? the model reads it (Enter: no reason)[/]")
    try:
        line = await read_answer(out, "reason> ", stdin=stdin, interrupt=interrupt)
    except QuestionCancelled:
        out.print()
        return ""
    return (line or "").strip()
