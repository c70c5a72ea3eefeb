"""How ``neta run`` reports a run: the answer, the notes, the summary line, JSON, exit status."""

from __future__ import annotations

import dataclasses
import sys

import typer

from neta.cli.context import echo_json
from neta.cli.render import NO_ONE_TO_ASK
from neta.cli.stop_signals import farewell, while_the_terminal_lasts
from neta.events import ToolCallStart
from neta.messages import Usage
from neta.runtime.agent import RunResult
from neta.terminal_text import sanitize

EXIT_CODES = {"completed": 0, "awaiting_input": 3}
"""Exit status per outcome; every other outcome exits 1."""

NEEDED_APPROVAL = 4
"""Exit status of a run that completed although calls needing approval were denied, nobody
being there to approve them (``--no-input``, ``--json``, no terminal)."""

NOT_KEPT = (
    "Note: your message was not kept in the conversation, the model never answered it; "
    "send it again to go on."
)
"""What ``neta run`` and ``neta chat`` say when a run ended before the model answered."""

_NOT_KEPT_SHORT = "your message was not kept (the model never answered it): send it again"

AWAITING_HINT = 'The run stopped to ask you this. To answer, run: neta run -c "your answer"'
"""What ``neta run`` says after a question: how to answer it and go on."""


def exit_code(result: RunResult) -> int:
    """The exit status of a run: by its outcome, and ``NEEDED_APPROVAL`` (see there)."""
    unapproved = any(denial.by == NO_ONE_TO_ASK for denial in result.denials)
    if result.outcome == "completed" and unapproved:
        return NEEDED_APPROVAL
    return EXIT_CODES.get(result.outcome, 1)


def say_goodbye(result: RunResult, signum: int, *, kept: bool, as_json: bool) -> None:
    """Print how a run a stop signal ended (``--json``: the result) while the terminal lasts.

    After SIGHUP it may be gone: then nothing more is printed, and the process exits as it
    should rather than fail on its output.
    """
    with while_the_terminal_lasts():
        if as_json:
            echo_json(result_json(result))
        if not kept:
            typer.echo(NOT_KEPT, err=True)
        typer.echo(f"\n{farewell(signum)}", err=True)
        sys.stdout.flush()
        sys.stderr.flush()


def show_outcome(result: RunResult, *, one_shot: bool = False, streamed: bool = False) -> None:
    """Print how a run ended: the answer alone on stdout, everything else on stderr.

    ``streamed``: the answer was already streamed to stdout (a terminal), so it is not
    printed again. ``one_shot`` (``neta run``): the hint says how to answer a question.
    The model's text and the reasons go through ``sanitize``; ``--json`` has them exactly.
    """
    shown = result.outcome == "awaiting_input" or (result.outcome == "completed" and not streamed)
    if shown and result.text:
        typer.echo(sanitize(result.text))
    if result.outcome == "awaiting_input":
        hint = AWAITING_HINT if one_shot else "(answer with your next message)"
        typer.echo(hint, err=True)
    elif result.outcome == "error":  # said as every error is, usage errors too
        typer.echo(f"Error: {' '.join(sanitize(result.reason).split())}", err=True)
    elif result.outcome != "completed":
        typer.echo(f"Run ended: {result.outcome}: {sanitize(result.reason)}", err=True)
    else:
        if not result.text.strip():
            typer.echo("Note: the model's final reply was empty.", err=True)
        if result.reason:  # completed, but not cleanly (a reply cut off at the token limit)
            typer.echo(f"Note: {sanitize(result.reason)}", err=True)


def summary_line(result: RunResult, seconds: float, *, kept: bool = True) -> str:
    """``2 turns, 1 tool call, 1200 tokens (1000 in, 200 out), 3.1 s``: how a run went.

    A run whose sub-agents called the model adds what they spent and the total:
    ``… (1000 in, 200 out) + 3 sub-agent calls, 900 tokens (800 in, 100 out), 2100 tokens
    in all, 3.1 s``. Only what is true is said: no token count where none was reported, and
    a run the model never answered (no token, no call) says just ``ended after 0.4 s``. Not
    ``kept``: the model never answered the message, which the conversation did not keep; the
    line ends saying so.
    """
    usage = result.usage
    calls = sum(1 for e in result.events if isinstance(e, ToolCallStart) and not e.agent_id)

    def n(count: int, word: str) -> str:
        return f"{count} {word}{'' if count == 1 else 's'}"

    def tokens(spent: Usage, cached: str = "") -> str:
        return (
            f", {spent.total_tokens} tokens "
            f"({spent.input_tokens} in{cached}, {spent.output_tokens} out)"
        )

    if kept or calls or result.sub_agent_calls or result.total_usage.total_tokens:
        line = f"{n(result.turns, 'turn')}, {n(calls, 'tool call')}"
        if usage.total_tokens:
            cached = ""
            if usage.cache_read_tokens or usage.cache_creation_tokens:
                cached = (
                    f", {usage.cache_read_tokens} cache read, "
                    f"{usage.cache_creation_tokens} cache write"
                )
            line += tokens(usage, cached)
        if result.sub_agent_calls:
            line += f" + {n(result.sub_agent_calls, 'sub-agent call')}"
            if result.sub_agent_usage.total_tokens:
                line += tokens(result.sub_agent_usage)
            if usage.total_tokens and result.sub_agent_usage.total_tokens:
                line += f", {result.total_usage.total_tokens} tokens in all"
        line = f"{line}, {seconds:.1f} s"
    else:  # it failed before the model said anything: no turn, call or token to count
        line = f"ended after {seconds:.1f} s"
    return line if kept else f"{line}; {_NOT_KEPT_SHORT}"


def result_json(result: RunResult) -> dict[str, object]:
    """A run's result as plain JSON data.

    ``usage`` is what the agent's own model calls cost; ``sub_agents`` the model calls its
    sub-agents made and their tokens; ``total_usage`` both together.
    """
    return {
        "session_id": result.session_id,
        "outcome": result.outcome,
        "text": result.text,
        "reason": result.reason,
        "turns": result.turns,
        "usage": result.usage.model_dump(),
        "sub_agents": {
            "calls": result.sub_agent_calls,
            "usage": result.sub_agent_usage.model_dump(),
        },
        "total_usage": result.total_usage.model_dump(),
        "denials": [dataclasses.asdict(denial) for denial in result.denials],
        "events": [e.model_dump(mode="json", fallback=str) for e in result.events],
    }
