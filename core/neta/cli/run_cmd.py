"""``neta run`` (one task) and ``neta chat`` (a conversation) in the terminal."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import typer

from neta.cli.context import echo_json, plugin_manager, report_problems
from neta.cli.render import EventRenderer, keep_waiting_notice
from neta.events import RunFinished
from neta.messages import Usage
from neta.providers.registry import DEFAULT_PROVIDER, resolve_model_name
from neta.providers.retry import DEFAULT_MAX_TRIES, RetryPolicy
from neta.runtime.agent import Agent, AgentSession, RunResult
from neta.runtime.attempt import DEFAULT_TURN_TIMEOUT

EXIT_CODES = {"completed": 0, "awaiting_input": 3}
"""Exit status per outcome; every other outcome exits 1."""

INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT, as shells report it)."""

ProviderOpt = typer.Option(
    None,
    "--provider",
    "-p",
    help=f"Model provider (default: the model's provider: prefix, else {DEFAULT_PROVIDER}).",
)
"""``--provider``: the model provider's name."""
ModelOpt = typer.Option("", "--model", "-m", help="Model name, or provider:model.")
"""``--model``: the model name, maybe prefixed with its provider (``anthropic:claude-…``)."""
BaseUrlOpt = typer.Option(None, "--base-url", help="The provider's API root (openai: …/v1).")
"""``--base-url``: the provider's API root."""
ApiKeyOpt = typer.Option(None, "--api-key", help="API key (default: the provider's env var).")
"""``--api-key``: the API key."""
ScriptOpt = typer.Option(None, "--script", help="JSON script for the scripted provider.")
"""``--script``: the scripted provider's JSON script."""
WorkspaceOpt = typer.Option(None, "--workspace", "-w", help="Workspace root (default: cwd).")
"""``--workspace``: the workspace root."""
ToolsetOpt = typer.Option([], "--toolset", "-t", help="Request a toolset (repeatable).")
"""``--toolset``: a toolset to request (repeatable)."""
DenyOpt = typer.Option([], "--deny", help="Deny a toolset (repeatable).")
"""``--deny``: a toolset to deny (repeatable)."""
MaxTurnsOpt = typer.Option(50, "--max-turns", min=1, help="Model turns before stopping.")
"""``--max-turns``: model turns before the run stops."""
NoInputOpt = typer.Option(False, "--no-input", help="Never ask the user; clarify degrades.")
"""``--no-input``: never ask the user."""
MaxTriesOpt = typer.Option(
    DEFAULT_MAX_TRIES, "--max-tries", min=1, help="Tries per model request (rate limits, 5xx)."
)
"""``--max-tries``: tries per model request before a retryable failure is final."""
ModelTimeoutOpt = typer.Option(
    None,
    "--model-timeout",
    min=0.001,
    help="Seconds the model server may stay silent, per read (default: the provider's; "
    "300 for openai).",
)
"""``--model-timeout``: seconds the model server may stay silent (per read)."""
TurnTimeoutOpt = typer.Option(
    DEFAULT_TURN_TIMEOUT,
    "--turn-timeout",
    min=0.001,
    help="Seconds one model turn may take in all before the run ends with an error.",
)
"""``--turn-timeout``: seconds one model turn (request and whole reply) may take."""

AWAITING_HINT = (
    "The run stopped to ask you this. To answer, run the task again with your answer in it, "
    "or use `neta chat`, which asks you as the questions come."
)
"""What ``neta run`` says after a question (a one-shot run cannot be continued)."""


def build_agent(
    ctx: typer.Context,
    provider: str | None,
    model: str,
    base_url: str | None,
    api_key: str | None,
    script: Path | None,
    workspace: Path | None,
    toolset: list[str],
    deny: list[str],
    max_turns: int,
    max_tries: int = DEFAULT_MAX_TRIES,
    *,
    model_timeout: float | None = None,
    turn_timeout: float = DEFAULT_TURN_TIMEOUT,
) -> Agent:
    """An ``Agent`` from the command-line options shared by ``run`` and ``chat``."""
    pm = plugin_manager(ctx)
    provider, model = resolve_model_name(provider, model, pm)
    return Agent(
        provider=provider or DEFAULT_PROVIDER,
        model=model,
        toolsets=toolset,
        deny=deny,
        workspace=workspace or Path.cwd(),
        plugin_manager=pm,
        max_turns=max_turns,
        retry=RetryPolicy(max_tries=max_tries),
        model_timeout=model_timeout,
        turn_timeout=turn_timeout,
        provider_options={
            "base_url": base_url,
            "api_key": api_key,
            "script": str(script) if script else None,
        },
    )


def run(
    ctx: typer.Context,
    prompt: str = typer.Argument(..., help="The task."),
    provider: str | None = ProviderOpt,
    model: str = ModelOpt,
    base_url: str | None = BaseUrlOpt,
    api_key: str | None = ApiKeyOpt,
    script: Path | None = ScriptOpt,
    workspace: Path | None = WorkspaceOpt,
    toolset: list[str] = ToolsetOpt,
    deny: list[str] = DenyOpt,
    max_turns: int = MaxTurnsOpt,
    max_tries: int = MaxTriesOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    no_input: bool = NoInputOpt,
    model_timeout: float | None = ModelTimeoutOpt,
    turn_timeout: float = TurnTimeoutOpt,
) -> None:
    """Run one task to completion and print the final answer (exit 0 when completed)."""
    agent = build_agent(
        ctx,
        provider,
        model,
        base_url,
        api_key,
        script,
        workspace,
        toolset,
        deny,
        max_turns,
        max_tries,
        model_timeout=model_timeout,
        turn_timeout=turn_timeout,
    )
    interactive = not no_input and not as_json and _stdin_is_a_terminal()
    session = new_terminal_session(agent, interactive=interactive)
    report_problems(ctx)
    renderer = None if as_json else EventRenderer()
    seen: list[Any] = []  # what a run interrupted by Ctrl-C still reports with --json
    try:
        result = asyncio.run(_run_once(agent, prompt, session, renderer or seen.append))
    except KeyboardInterrupt:  # the run was cancelled (its tools too) on the way out
        if as_json:
            echo_json(result_json(_interrupted(session, seen)))
        typer.echo("\nInterrupted.", err=True)
        raise typer.Exit(INTERRUPTED) from None
    finally:
        agent.end_session(session)
    if as_json:
        echo_json(result_json(result))
    else:
        show_outcome(result, one_shot=True)
    raise typer.Exit(EXIT_CODES.get(result.outcome, 1))


async def _run_once(agent: Agent, prompt: str, session: AgentSession, on_event: Any) -> RunResult:
    if not isinstance(on_event, EventRenderer):
        return await agent.run(prompt, session=session, on_event=on_event)
    async with keep_waiting_notice(on_event):
        return await agent.run(prompt, session=session, on_event=on_event)


def _interrupted(session: AgentSession, events: list[Any]) -> RunResult:
    """The result of a run Ctrl-C cancelled, from the events it emitted until then."""
    end = next((e for e in reversed(events) if isinstance(e, RunFinished)), None)
    return RunResult(
        text="",
        outcome="cancelled",
        reason="interrupted by Ctrl-C" + (f" ({end.reason})" if end and end.reason else ""),
        messages=list(session.history),
        events=events,
        usage=Usage(),
        turns=end.turns if end is not None else 0,
        session_id=session.session_id,
    )


def chat(
    ctx: typer.Context,
    provider: str | None = ProviderOpt,
    model: str = ModelOpt,
    base_url: str | None = BaseUrlOpt,
    api_key: str | None = ApiKeyOpt,
    script: Path | None = ScriptOpt,
    workspace: Path | None = WorkspaceOpt,
    toolset: list[str] = ToolsetOpt,
    deny: list[str] = DenyOpt,
    max_turns: int = MaxTurnsOpt,
    max_tries: int = MaxTriesOpt,
    model_timeout: float | None = ModelTimeoutOpt,
    turn_timeout: float = TurnTimeoutOpt,
) -> None:
    """Talk with an agent in the terminal; the history is kept between messages (/exit ends)."""
    agent = build_agent(
        ctx,
        provider,
        model,
        base_url,
        api_key,
        script,
        workspace,
        toolset,
        deny,
        max_turns,
        max_tries,
        model_timeout=model_timeout,
        turn_timeout=turn_timeout,
    )
    session = new_terminal_session(agent, interactive=True)
    report_problems(ctx)
    try:
        asyncio.run(_chat_loop(agent, session))
    except KeyboardInterrupt:
        typer.echo("\nInterrupted.", err=True)
        raise typer.Exit(INTERRUPTED) from None
    finally:
        agent.end_session(session)


async def _chat_loop(agent: Agent, session: AgentSession) -> None:
    renderer = EventRenderer()
    while True:
        if sys.stdin is None:  # started with standard input closed: nothing will be said
            return
        try:
            line = await asyncio.to_thread(input, "you> ")
        except EOFError:
            typer.echo()
            return
        if line.strip() in ("/exit", "/quit"):
            return
        if not line.strip():
            continue
        async with keep_waiting_notice(renderer):
            result = await agent.run(line, session=session, on_event=renderer)
        show_outcome(result)


def _stdin_is_a_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()  # None: started with stdin closed


def new_terminal_session(agent: Agent, *, interactive: bool) -> AgentSession:
    """A session for the terminal; ``interactive`` sessions can ask the user questions.

    An interactive session gets the terminal clarify callback: the question and its numbered
    choices are shown and the answer is read at the prompt. A non-interactive one gets none,
    so clarify degrades: the run ends awaiting input with the question as its text.
    """
    from neta.cli.clarify_prompt import terminal_clarify

    return agent.new_session(clarify=terminal_clarify() if interactive else None)


def show_outcome(result: RunResult, *, one_shot: bool = False) -> None:
    """Print how a run ended, after the streamed text.

    ``one_shot`` (``neta run``): a question cannot be answered with a next message, so the
    hint says how to answer instead.
    """
    if result.outcome == "awaiting_input":
        hint = AWAITING_HINT if one_shot else "(answer with your next message)"
        typer.echo(f"\n{result.text}\n{hint}")
    elif result.outcome != "completed":
        typer.echo(f"Run ended: {result.outcome}: {result.reason}", err=True)
    else:
        if not result.text.strip():
            typer.echo("Note: the model's final reply was empty.", err=True)
        if result.reason:  # completed, but not cleanly (a reply cut off at the token limit)
            typer.echo(f"Note: {result.reason}", err=True)
    if result.usage.total_tokens:
        typer.echo(usage_line(result.usage, result.turns), err=True)


def usage_line(usage: Usage, turns: int) -> str:
    """The summary after a run: ``tokens: 1200 in (1000 cache read, 0 cache write), 80 out``."""
    cached = ""
    if usage.cache_read_tokens or usage.cache_creation_tokens:
        cached = (
            f" ({usage.cache_read_tokens} cache read, {usage.cache_creation_tokens} cache write)"
        )
    plural = "" if turns == 1 else "s"
    return (
        f"tokens: {usage.input_tokens} in{cached}, {usage.output_tokens} out "
        f"over {turns} turn{plural}"
    )


def result_json(result: RunResult) -> dict[str, object]:
    """A run's result as plain JSON data."""
    return {
        "session_id": result.session_id,
        "outcome": result.outcome,
        "text": result.text,
        "reason": result.reason,
        "turns": result.turns,
        "usage": result.usage.model_dump(),
        "events": [e.model_dump(mode="json", fallback=str) for e in result.events],
    }
