"""``neta run``: one task, kept as a conversation that ``-c`` or ``--session`` continues."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import stat
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from neta.cli.approval_prompt import terminal_approve
from neta.cli.clarify_prompt import QuestionInterrupt, terminal_clarify
from neta.cli.collector import freeze_startup_objects
from neta.cli.context import echo_json, plugin_manager, report_problems
from neta.cli.conversation_model import keep_model, model_choice
from neta.cli.conversations import Conversation, Conversations, ModelChoice, answered
from neta.cli.options import (
    AgentOptions,
    AllowRuleOpt,
    ApiKeyFileOpt,
    ApiKeyOpt,
    AskRuleOpt,
    BaseUrlOpt,
    DenyOpt,
    DenyRuleOpt,
    FallbackOpt,
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
from neta.cli.otel import OtelOpt, traces_exported
from neta.cli.output_schema import OutputSchemaOpt, read_output_schema
from neta.cli.prompt_images import ImageOpt, read_images
from neta.cli.render import EventRenderer, denial_lines, keep_waiting_notice, terminal_renderer
from neta.cli.run_report import (
    NOT_KEPT,
    exit_code,
    result_json,
    say_goodbye,
    show_outcome,
    summary_line,
)
from neta.cli.stop_signals import Stop, exit_status, on_signals, stopped_because
from neta.cli.trust_notice import settle_trust
from neta.errors import NetaError
from neta.events import RunFinished
from neta.images import ImagePart
from neta.messages import Message
from neta.providers.registry import DEFAULT_PROVIDER, resolve_model_name
from neta.providers.retry import RetryPolicy
from neta.runtime.agent import Agent, AgentSession, RunResult
from neta.runtime.metering import Meter
from neta.sandbox import sandbox_unavailable

ContinueOpt = typer.Option(
    False, "--continue", "-c", help="Go on with the latest conversation in this workspace."
)
"""``--continue``: go on with the latest conversation in the workspace."""
SessionOpt = typer.Option(
    None, "--session", help="Go on with this conversation (an id from `neta logs`)."
)
"""``--session``: go on with a given conversation."""
VerboseOpt = typer.Option(
    False,
    "--verbose",
    "-v",
    help="Show every tool call and result whole (else long ones are cut; diffs never are).",
)
"""``--verbose``: tool calls' arguments and results shown whole."""


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
        model=[model, *options.fallbacks] if options.fallbacks else model,
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
    fallback: list[str] = FallbackOpt,
    image: list[Path] = ImageOpt,
    output_schema: Path | None = OutputSchemaOpt,
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
    verbose: bool = VerboseOpt,
    model_timeout: float | None = ModelTimeoutOpt,
    turn_timeout: float = TurnTimeoutOpt,
    sandbox: str = SandboxOpt,
    network: bool = NetworkOpt,
    mode: str | None = ModeOpt,
    allow: list[str] = AllowRuleOpt,
    ask: list[str] = AskRuleOpt,
    deny_rule: list[str] = DenyRuleOpt,
    otel: bool = OtelOpt,
) -> None:
    """Run one task and print the final answer on stdout.

    Exit 0 completed, 3 stopped to ask you a question, 4 completed but calls that needed
    your approval were denied (no terminal, --no-input or --json: nobody to ask; they are
    listed), 130, 143 or 129 stopped by Ctrl-C, SIGTERM or SIGHUP (the run is stored), 1
    otherwise.
    """
    message = read_prompt(prompt)
    images = read_images(image)
    schema = read_output_schema(output_schema)
    if continue_ and session_id:
        raise typer.BadParameter("give --continue or --session, not both", param_hint="-c")
    options = AgentOptions.from_flags(
        provider=provider, model=model, fallback=fallback, base_url=base_url, api_key=api_key,
        api_key_file=api_key_file, script=script, workspace=workspace, toolset=toolset,
        deny=deny, only=only, max_turns=max_turns, max_tries=max_tries,
        model_timeout=model_timeout, turn_timeout=turn_timeout, sandbox=sandbox,
        network=network, mode=mode, allow=allow, ask=ask, deny_rule=deny_rule,
    )  # fmt: skip
    try:
        with traces_exported(otel):
            code = _run(
                ctx,
                message,
                continue_,
                session_id,
                options,
                as_json,
                no_input,
                verbose,
                images=images,
                output_type=schema,
            )
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
    verbose: bool,
    *,
    images: Sequence[ImagePart] = (),
    output_type: dict[str, Any] | None = None,
) -> int:
    conversations = Conversations()
    try:
        where = (options.workspace or Path.cwd()).resolve()
        history, found = resume(conversations, where, continue_, session_id)
        if found is not None and session_id and options.workspace is None:
            where = Path(found.workspace)
        interactive = not no_input and not as_json and _stdin_is_a_terminal()
        settle_trust(where, ask=interactive)
        pm = plugin_manager(ctx)
        options = keep_model(options, found.model_choice if found else None, pm)
        options = dataclasses.replace(options, workspace=where)
        agent = build_agent(ctx, options)
        model = model_choice(options, agent, pm)
        if found is None:
            stored_id = conversations.start(where, "run", message, model)
        else:
            stored_id = found.session_id
        questions = QuestionInterrupt()  # no timer is drawn over a question
        session = new_terminal_session(
            agent,
            interactive=interactive,
            history=history,
            session_id=stored_id,
            interrupt=questions,
        )
        report_problems(ctx)
        renderer = (
            None if as_json else terminal_renderer(verbose=verbose, asking=lambda: questions.asking)
        )
        return _run_and_report(
            agent,
            session,
            message,
            conversations,
            model,
            renderer,
            images=images,
            output_type=output_type,
        )
    finally:
        conversations.close()


def _run_and_report(
    agent: Agent,
    session: AgentSession,
    message: str,
    conversations: Conversations,
    model: ModelChoice,
    renderer: EventRenderer | None,
    *,
    images: Sequence[ImagePart] = (),
    output_type: dict[str, Any] | None = None,
) -> int:
    """Run ``message``, store it and print how it went (``renderer`` ``None``: ``--json``)."""
    as_json = renderer is None
    seen: list[Any] = []  # what a run a signal stopped still reports
    started = time.monotonic()
    spent_before = session.meter.snapshot()
    stop = Stop()
    try:
        result = asyncio.run(
            _run_until_stopped(
                agent,
                message,
                session,
                seen,
                renderer,
                stop,
                images=images,
                output_type=output_type,
            )
        )
    except KeyboardInterrupt:  # Ctrl-C just before or after the run took signals itself
        stop.note(signal.SIGINT)
        result = None
    finally:
        agent.end_session(session)
    if result is None:  # a signal stopped it; one arriving after the run ended changes nothing
        signum = stop.signum if stop.signum is not None else signal.SIGINT
        stopped = stopped_result(session, seen, signum, session.meter.since(spent_before))
        kept = remember(conversations, session, stopped, model)
        say_goodbye(stopped, signum, kept=kept, as_json=as_json)
        return exit_status(signum)
    kept = remember(conversations, session, result, model)
    if renderer is None:
        echo_json(result_json(result))
    else:
        show_outcome(result, one_shot=True, streamed=renderer.answer_on_stdout)
        for line in denial_lines(result.denials, agent.workspace):
            typer.echo(line, err=True)
    if renderer is None and not kept:
        typer.echo(NOT_KEPT, err=True)
    if renderer is not None:  # an error stays one line: the summary says what was not kept
        typer.echo(summary_line(result, time.monotonic() - started, kept=kept), err=True)
    return exit_code(result)


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
) -> tuple[list[Message], Conversation | None]:
    """The history of the conversation to go on with, and it (``[]`` and ``None``: a new one)."""
    if session_id:
        found, history = conversations.resume(session_id)
        return history, found
    if not continue_:
        return [], None
    latest = conversations.latest(workspace)
    if latest is None:
        raise typer.BadParameter(
            f"no conversation in {workspace} to continue; start one without -c",
            param_hint="-c",
        )
    found, history = conversations.resume(latest)
    return history, found


def remember(
    conversations: Conversations, session: AgentSession, result: RunResult, model: ModelChoice
) -> bool:
    """Save the conversation, how its run ended and what it cost; whether the message was kept.

    A message the model never answered (the run failed or was stopped before its reply) is
    not kept, and the conversation's model stays the one that last answered.
    """
    history = list(session.history)
    kept = answered(history)
    if len(kept) < len(history):
        session.history[:] = kept  # a chat's next message must not follow it either
    usage = result.total_usage
    conversations.save(
        session.session_id,
        kept,
        outcome=result.outcome,
        question=result.text if result.outcome == "awaiting_input" else "",
        reason=result.reason if result.outcome != "completed" else "",
        turns=result.turns,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        model=model if len(kept) == len(history) else None,
    )
    return len(kept) == len(history)


async def _run_until_stopped(
    agent: Agent,
    prompt: str,
    session: AgentSession,
    seen: list[Any],
    renderer: EventRenderer | None,
    stop: Stop,
    *,
    images: Sequence[ImagePart] = (),
    output_type: dict[str, Any] | None = None,
) -> RunResult | None:
    """The run's result, or ``None`` when a stop signal (``STOP_SIGNALS``) cancelled it.

    Every event is added to ``seen`` and shown by ``renderer``, if any.
    """

    def on_event(event: Any) -> None:
        seen.append(event)
        if renderer is not None:
            renderer(event)

    async def run() -> RunResult:
        if renderer is None:
            return await agent.run(
                prompt,
                session=session,
                on_event=on_event,
                images=images,
                output_type=output_type,
            )
        async with keep_waiting_notice(renderer):
            return await agent.run(
                prompt,
                session=session,
                on_event=on_event,
                images=images,
                output_type=output_type,
            )

    task = asyncio.ensure_future(run())

    def stopping(signum: int) -> None:
        stop.note(signum)
        task.cancel()

    with on_signals(stopping):
        try:
            return await task
        except asyncio.CancelledError:
            if stop.signum is None:
                raise
            return None


def stopped_result(
    session: AgentSession, events: list[Any], signum: int, spent: Meter
) -> RunResult:
    """The result of a run a signal cancelled, from what it emitted and spent until then."""
    end = next(
        (e for e in reversed(events) if isinstance(e, RunFinished) and e.agent_id is None), None
    )
    reason = stopped_because(signum) + (f" ({end.reason})" if end and end.reason else "")
    return RunResult(
        text="",
        outcome="cancelled",
        reason=reason,
        messages=list(session.history),
        events=events,
        usage=spent.usage,
        turns=end.turns if end is not None else 0,
        session_id=session.session_id,
        sub_agent_calls=spent.sub_agent_calls,
        sub_agent_usage=spent.sub_agent_usage,
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
