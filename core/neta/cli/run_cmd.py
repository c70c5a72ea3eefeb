"""``neta run``: one task, kept as a conversation that ``-c`` or ``--session`` continues."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import stat
import sys
import time
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from neta.cli.approval_prompt import terminal_approve
from neta.cli.clarify_prompt import QuestionInterrupt, terminal_clarify
from neta.cli.collector import freeze_startup_objects
from neta.cli.context import echo_json, plugin_manager, report_problems
from neta.cli.conversations import Conversations
from neta.cli.options import (
    AgentOptions,
    AllowRuleOpt,
    ApiKeyFileOpt,
    ApiKeyOpt,
    AskRuleOpt,
    BaseUrlOpt,
    DenyOpt,
    DenyRuleOpt,
    MaxTriesOpt,
    MaxTurnsOpt,
    ModelOpt,
    ModelTimeoutOpt,
    ModeOpt,
    NetworkOpt,
    NoInputOpt,
    OnlyOpt,
    ProviderOpt,
    SandboxOpt,
    ScriptOpt,
    ToolsetOpt,
    TurnTimeoutOpt,
    WorkspaceOpt,
)
from neta.cli.render import NO_ONE_TO_ASK, EventRenderer, denial_lines, keep_waiting_notice
from neta.cli.trust_notice import settle_trust
from neta.errors import NetaError
from neta.events import RunFinished, ToolCallStart
from neta.messages import Message, Usage
from neta.providers.registry import DEFAULT_PROVIDER, resolve_model_name
from neta.providers.retry import RetryPolicy
from neta.runtime.agent import Agent, AgentSession, RunResult
from neta.sandbox import sandbox_unavailable
from neta.terminal_text import sanitize

EXIT_CODES = {"completed": 0, "awaiting_input": 3}
"""Exit status per outcome; every other outcome exits 1."""

NEEDED_APPROVAL = 4
"""Exit status of a run that completed although calls needing approval were denied, nobody
being there to approve them (``--no-input``, ``--json``, no terminal)."""

INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT, as shells report it)."""

AWAITING_HINT = 'The run stopped to ask you this. To answer, run: neta run -c "your answer"'
"""What ``neta run`` says after a question: how to answer it and go on."""

ContinueOpt = typer.Option(
    False, "--continue", "-c", help="Go on with the latest conversation in this workspace."
)
"""``--continue``: go on with the latest conversation in the workspace."""
SessionOpt = typer.Option(
    None, "--session", help="Go on with this conversation (an id from `neta logs`)."
)
"""``--session``: go on with a given conversation."""


def build_agent(ctx: typer.Context, options: AgentOptions) -> Agent:
    """An ``Agent`` from the command-line options shared by ``run`` and ``chat``.

    Raises:
        ConfigError: an option is wrong, or a rules file cannot be read (named with its line).
    """
    permissions = options.permissions()
    pm = plugin_manager(ctx)
    provider, model = resolve_model_name(options.provider, options.model, pm)
    agent = Agent(
        provider=provider or DEFAULT_PROVIDER,
        model=model,
        **options.workspace_and_toolsets(),
        plugin_manager=pm,
        max_turns=options.max_turns,
        retry=RetryPolicy(max_tries=options.max_tries),
        model_timeout=options.model_timeout,
        turn_timeout=options.turn_timeout,
        sandbox=options.sandbox,
        permissions=permissions,
        provider_options=options.provider_options(),
    )
    agent.policy()  # a broken rules file is reported now, before a conversation is stored
    if agent.sandbox.enabled:
        sandbox_unavailable()  # learnt now, not during the first command (a Ctrl-C then)
    freeze_startup_objects()  # the model's SDK is loaded
    return agent


def run(
    ctx: typer.Context,
    prompt: str = typer.Argument(
        "",
        help="The task ('-': read it from stdin; piped stdin is added to it).",
        show_default=False,
    ),
    continue_: bool = ContinueOpt,
    session_id: str | None = SessionOpt,
    provider: str | None = ProviderOpt,
    model: str = ModelOpt,
    base_url: str | None = BaseUrlOpt,
    api_key: str | None = ApiKeyOpt,
    api_key_file: Path | None = ApiKeyFileOpt,
    script: Path | None = ScriptOpt,
    workspace: Path | None = WorkspaceOpt,
    toolset: list[str] = ToolsetOpt,
    deny: list[str] = DenyOpt,
    only: list[str] = OnlyOpt,
    max_turns: int = MaxTurnsOpt,
    max_tries: int = MaxTriesOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
    no_input: bool = NoInputOpt,
    model_timeout: float | None = ModelTimeoutOpt,
    turn_timeout: float = TurnTimeoutOpt,
    sandbox: str = SandboxOpt,
    network: bool = NetworkOpt,
    mode: str | None = ModeOpt,
    allow: list[str] = AllowRuleOpt,
    ask: list[str] = AskRuleOpt,
    deny_rule: list[str] = DenyRuleOpt,
) -> None:
    """Run one task and print the final answer on stdout.

    Exit 0 completed, 3 stopped to ask you a question, 4 completed but calls that needed
    your approval were denied (no terminal, --no-input or --json: nobody to ask; they are
    listed), 1 otherwise.
    """
    message = read_prompt(prompt)
    if continue_ and session_id:
        raise typer.BadParameter("give --continue or --session, not both", param_hint="-c")
    options = AgentOptions.from_flags(
        provider=provider, model=model, base_url=base_url, api_key=api_key,
        api_key_file=api_key_file, script=script, workspace=workspace, toolset=toolset,
        deny=deny, only=only, max_turns=max_turns, max_tries=max_tries,
        model_timeout=model_timeout, turn_timeout=turn_timeout, sandbox=sandbox,
        network=network, mode=mode, allow=allow, ask=ask, deny_rule=deny_rule,
    )  # fmt: skip
    try:
        code = _run(ctx, message, continue_, session_id, options, as_json, no_input)
    except NetaError as exc:
        if as_json:  # a script reads stdout: it gets JSON whatever happened (usage errors: main)
            echo_json(failed_run_json(str(exc)))
        raise
    raise typer.Exit(code)


def failed_run_json(reason: str) -> dict[str, object]:
    """What ``neta run --json`` prints for a run that could not start."""
    return {"outcome": "error", "reason": reason, "text": "", "session_id": None}


def _run(
    ctx: typer.Context,
    message: str,
    continue_: bool,
    session_id: str | None,
    options: AgentOptions,
    as_json: bool,
    no_input: bool,
) -> int:
    conversations = Conversations()
    try:
        where = (options.workspace or Path.cwd()).resolve()
        history, stored_id = resume(conversations, where, continue_, session_id)
        if session_id and options.workspace is None:
            where = Path(conversations.get(stored_id or session_id).workspace)
        interactive = not no_input and not as_json and _stdin_is_a_terminal()
        settle_trust(where, ask=interactive)
        agent = build_agent(ctx, dataclasses.replace(options, workspace=where))
        if stored_id is None:
            stored_id = conversations.start(where, "run", message)
        session = new_terminal_session(
            agent, interactive=interactive, history=history, session_id=stored_id
        )
        report_problems(ctx)
        return _run_and_report(agent, session, message, conversations, as_json=as_json)
    finally:
        conversations.close()


def _run_and_report(
    agent: Agent,
    session: AgentSession,
    message: str,
    conversations: Conversations,
    *,
    as_json: bool,
) -> int:
    renderer = None if as_json else EventRenderer()
    seen: list[Any] = []  # what a run interrupted by Ctrl-C still reports with --json
    on_event: Any = renderer or seen.append
    started = time.monotonic()
    try:
        result = asyncio.run(_run_once(agent, message, session, on_event))
    except KeyboardInterrupt:  # the run was cancelled (its tools too) on the way out
        interrupted = _interrupted(session, seen)
        remember(conversations, session, interrupted)
        if as_json:
            echo_json(result_json(interrupted))
        typer.echo("\nInterrupted.", err=True)
        return INTERRUPTED
    finally:
        agent.end_session(session)
    remember(conversations, session, result)
    if as_json:
        echo_json(result_json(result))
    else:
        show_outcome(
            result, one_shot=True, streamed=renderer is not None and renderer.answer_on_stdout
        )
        for line in denial_lines(result.denials, agent.workspace):
            typer.echo(line, err=True)
        typer.echo(summary_line(result, time.monotonic() - started), err=True)
    return exit_code(result)


def exit_code(result: RunResult) -> int:
    """The exit status of a run: by its outcome, and ``NEEDED_APPROVAL`` (see there)."""
    unapproved = any(denial.by == NO_ONE_TO_ASK for denial in result.denials)
    if result.outcome == "completed" and unapproved:
        return NEEDED_APPROVAL
    return EXIT_CODES.get(result.outcome, 1)


def read_prompt(prompt: str) -> str:
    """The task: the argument, stdin for ``-``, and piped stdin added after the argument.

    Raises:
        typer.BadParameter: the task is empty.
    """
    piped = _piped_stdin()
    if prompt == "-":
        text = piped or ""
    else:
        text = prompt if not piped else f"{prompt}\n\n{piped}" if prompt.strip() else piped
    if not text.strip():
        raise typer.BadParameter(
            "the task is empty; give it as an argument, or '-' to read it from stdin",
            param_hint="PROMPT",
        )
    return text


def _piped_stdin() -> str | None:
    """What a pipe or a redirected file on stdin holds; ``None`` for a terminal or nothing."""
    stream = sys.stdin
    if stream is None or stream.isatty():
        return None
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, AttributeError):  # a stand-in stream (a test runner's)
        return stream.read() or None
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
        return None  # /dev/null, a socket: nothing piped
    return stream.read() or None


def resume(
    conversations: Conversations, workspace: Path, continue_: bool, session_id: str | None
) -> tuple[list[Message], str | None]:
    """The history and id of the conversation to go on with (``[]`` and ``None``: a new one)."""
    if session_id:
        found, history = conversations.resume(session_id)
        return history, found.session_id
    if not continue_:
        return [], None
    latest = conversations.latest(workspace)
    if latest is None:
        raise typer.BadParameter(
            f"no conversation in {workspace} to continue; start one without -c",
            param_hint="-c",
        )
    found, history = conversations.resume(latest)
    return history, found.session_id


def remember(conversations: Conversations, session: AgentSession, result: RunResult) -> None:
    """Save the conversation and how its run ended."""
    conversations.save(
        session.session_id,
        list(session.history),
        outcome=result.outcome,
        question=result.text if result.outcome == "awaiting_input" else "",
        turns=result.turns,
        input_tokens=result.usage.input_tokens,
        output_tokens=result.usage.output_tokens,
    )


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


def _stdin_is_a_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()  # None: started with stdin closed


def new_terminal_session(
    agent: Agent,
    *,
    interactive: bool,
    history: list[Message] | None = None,
    session_id: str | None = None,
    interrupt: QuestionInterrupt | None = None,
) -> AgentSession:
    """A session for the terminal; ``interactive`` sessions can ask the user questions.

    An interactive session gets the terminal clarify and approve callbacks: the question (or
    the tool call needing approval) and its numbered choices are shown and the answer is read
    at the prompt. A non-interactive one gets neither, so clarify degrades (the run ends
    awaiting input with the question as its text) and a call needing approval is denied,
    the model told that nobody could be asked.
    """
    if not interactive:
        return agent.new_session(history=history or (), session_id=session_id)
    console = Console(stderr=True, highlight=False)
    return agent.new_session(
        clarify=terminal_clarify(console=console, interrupt=interrupt),
        approve=terminal_approve(console=console, interrupt=interrupt),
        history=history or (),
        session_id=session_id,
    )


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


def summary_line(result: RunResult, seconds: float) -> str:
    """``2 turns, 1 tool call, 1200 tokens (1000 in, 200 out), 3.1 s``: how a run went."""
    usage = result.usage
    calls = sum(1 for e in result.events if isinstance(e, ToolCallStart) and not e.agent_id)

    def n(count: int, word: str) -> str:
        return f"{count} {word}{'' if count == 1 else 's'}"

    cached = ""
    if usage.cache_read_tokens or usage.cache_creation_tokens:
        cached = (
            f", {usage.cache_read_tokens} cache read, {usage.cache_creation_tokens} cache write"
        )
    return (
        f"{n(result.turns, 'turn')}, {n(calls, 'tool call')}, "
        f"{usage.input_tokens + usage.output_tokens} tokens "
        f"({usage.input_tokens} in{cached}, {usage.output_tokens} out), {seconds:.1f} s"
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
        "denials": [dataclasses.asdict(denial) for denial in result.denials],
        "events": [e.model_dump(mode="json", fallback=str) for e in result.events],
    }
