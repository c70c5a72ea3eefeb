"""``neta chat``: a conversation in the terminal, kept in ``NETA_HOME`` (``-c`` resumes it)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
import sys
from pathlib import Path
from typing import Any

import typer
from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.markup import escape

from neta.cli.chat_input import ChatInput, chat_input
from neta.cli.clarify_prompt import QuestionInterrupt
from neta.cli.context import plugin_manager, report_problems
from neta.cli.conversation_model import keep_model, model_choice
from neta.cli.conversations import Conversations, ModelChoice
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
    OnlyOpt,
    ProviderOpt,
    SandboxOpt,
    ScriptOpt,
    ToolsetOpt,
    TurnTimeoutOpt,
    WorkspaceOpt,
)
from neta.cli.otel import OtelOpt, traces_exported
from neta.cli.render import EventRenderer, keep_waiting_notice, terminal_renderer
from neta.cli.run_cmd import (
    ContinueOpt,
    SessionOpt,
    VerboseOpt,
    build_agent,
    new_terminal_session,
    remember,
    resume,
    stopped_result,
)
from neta.cli.run_report import NOT_KEPT, show_outcome
from neta.cli.sanitize import sanitize_markup
from neta.cli.stop_signals import (
    INTERRUPTED,
    STOP_SIGNALS,
    Stop,
    exit_status,
    farewell,
    on_signals,
    while_the_terminal_lasts,
)
from neta.cli.trust_notice import settle_trust
from neta.runtime.agent import Agent, AgentSession, RunResult
from neta.terminal_text import sanitize

SLASH_COMMANDS = {
    "/help": "list these commands",
    "/toolsets": "the toolsets this conversation has",
    "/todo": "the todo list",
    "/clear": "start a new conversation (the old one stays in `neta logs`)",
    "/session": "this conversation's id, and how to come back to it",
    "/exit": "leave (also: exit, quit, Ctrl-D)",
}
"""The commands ``neta chat`` answers itself; they never reach the model."""

_LEAVE = {"exit", "quit", "/exit", "/quit"}
_LEAVING_SIGNALS = tuple(signum for signum in STOP_SIGNALS if signum != signal.SIGINT)
"""The stop signals that end the chat: SIGTERM and SIGHUP (Ctrl-C cancels just the turn)."""
_EXIT_HINT = "/help · Ctrl-D exits"
_HANGUP_GRACE = 1.0  # seconds a prompt that failed waits for the SIGHUP of a closed terminal


def chat(
    ctx: typer.Context,
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
    model_timeout: float | None = ModelTimeoutOpt,
    turn_timeout: float = TurnTimeoutOpt,
    sandbox: str = SandboxOpt,
    network: bool = NetworkOpt,
    mode: str | None = ModeOpt,
    allow: list[str] = AllowRuleOpt,
    ask: list[str] = AskRuleOpt,
    deny_rule: list[str] = DenyRuleOpt,
    verbose: bool = VerboseOpt,
    otel: bool = OtelOpt,
) -> None:
    """Talk with an agent in the terminal; the conversation is kept (`neta chat -c` resumes).

    Edits and commands ask before they run (--mode, --allow, --ask and --deny-rule change
    what asks; `neta permissions` lists the rules in force).
    """
    options = AgentOptions.from_flags(
        provider=provider, model=model, base_url=base_url, api_key=api_key,
        api_key_file=api_key_file, script=script, workspace=workspace, toolset=toolset,
        deny=deny, only=only, max_turns=max_turns, max_tries=max_tries,
        model_timeout=model_timeout, turn_timeout=turn_timeout, sandbox=sandbox,
        network=network, mode=mode, allow=allow, ask=ask, deny_rule=deny_rule,
    )  # fmt: skip
    options.permissions()  # a mistake in a rule is told before anything starts
    conversations = Conversations()
    try:
        where = (workspace or Path.cwd()).resolve()
        history, found = resume(conversations, where, continue_, session_id)
        stored_id = found.session_id if found is not None else None
        settle_trust(where, ask=True)
        pm = plugin_manager(ctx)
        options = keep_model(options, found.model_choice if found else None, pm)
        options = dataclasses.replace(options, workspace=where)
        agent = build_agent(ctx, options)
        interrupt = QuestionInterrupt()
        session = new_terminal_session(
            agent, interactive=True, history=history, session_id=stored_id, interrupt=interrupt
        )
        report_problems(ctx)
        choice = model_choice(options, agent, pm)
        chat = Chat(
            agent, session, conversations, stored_id, chat_input(), interrupt, choice, verbose
        )
        with traces_exported(otel):
            try:
                code = asyncio.run(chat.loop())
            finally:
                agent.end_session(chat.session)  # /clear may have started another
    finally:
        conversations.close()
    raise typer.Exit(code)


class Chat:
    """One ``neta chat``: reads lines, answers slash commands, runs the rest as turns."""

    def __init__(
        self,
        agent: Agent,
        session: AgentSession,
        conversations: Conversations,
        stored_id: str | None,
        reader: ChatInput,
        interrupt: QuestionInterrupt | None = None,
        model: ModelChoice | None = None,
        verbose: bool = False,
    ) -> None:
        self.agent = agent
        self.session = session
        self.conversations = conversations
        self.stored_id = stored_id
        self.reader = reader
        self.interrupt = interrupt or QuestionInterrupt()
        self.err = Console(stderr=True, highlight=False)
        self.verbose = verbose
        self.renderer = self._new_renderer()
        self.provider_name = type(agent.provider).__name__.removesuffix("Provider").lower()
        self.model = model or ModelChoice(self.provider_name, agent.model)  # stored with it
        self.stop = Stop()
        self._stopped = asyncio.Event()
        self._doing: asyncio.Future[Any] | None = None  # the read or the turn a signal stops

    def banner(self, width: int) -> str:
        """One line, of ``width`` at most if it can be: model, workspace, toolsets, how to leave.

        How to leave is always there: a long model or workspace name is cut short, and the
        toolsets that do not fit are counted instead of named. Names go through ``sanitize``.
        """
        resumed = f" · resumed {self.stored_id[:8]}" if self.stored_id else ""
        tail = f"{resumed} · {_EXIT_HINT}"
        toolsets = sorted(sanitize(name) for name in self.session.toolsets.enabled)
        fewest = _toolsets_fitting(toolsets, 0)
        room = width - cell_len(tail) - cell_len(fewest) - cell_len("neta chat ·  ·  · ")
        where = sanitize(self.agent.workspace.name or str(self.agent.workspace))
        model = sanitize(self.agent.model or self.provider_name)
        model, where = _shorten(model, where, max(room, 8))
        head = f"neta chat · {model} · {where} · "
        return head + _toolsets_fitting(toolsets, width - cell_len(head) - cell_len(tail)) + tail

    async def loop(self) -> int:
        """Converse until the user leaves; returns the exit status.

        SIGTERM and SIGHUP end it as Ctrl-C at an empty prompt does, wherever they come: a
        turn running is cancelled (its tools too) and stored first. The status is then 128 +
        the signal's number.
        """
        if sys.stdin is None:  # started with standard input closed: nothing will be said
            return 0
        # fitted to the width already; on a very narrow terminal it wraps rather than lose a part
        self.err.print(f"[dim]{escape(self.banner(self.err.width))}[/]", soft_wrap=True)
        with on_signals(self._leave, _LEAVING_SIGNALS):
            while self.stop.signum is None:
                try:
                    line = await self._read("you> ")
                except EOFError:
                    return 0
                except KeyboardInterrupt:  # Ctrl-C at an empty prompt: leave at once
                    self.err.print("[dim]Interrupted.[/]")
                    return INTERRUPTED
                except asyncio.CancelledError:
                    if self.stop.signum is None:
                        raise
                    break
                except OSError:  # a terminal that was closed fails the prompt; SIGHUP follows
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._stopped.wait(), _HANGUP_GRACE)
                    if self.stop.signum is None:
                        raise
                    break
                text = line.strip()
                if not text:
                    continue
                if text in _LEAVE:
                    return 0
                if text.startswith("/"):
                    self.command(text)
                    continue
                await self.turn(line)
        assert self.stop.signum is not None
        with while_the_terminal_lasts():
            self.err.print(f"[dim]{escape(farewell(self.stop.signum))}[/]")
            sys.stderr.flush()
        return exit_status(self.stop.signum)

    def _new_renderer(self) -> EventRenderer:
        return terminal_renderer(verbose=self.verbose, asking=lambda: self.interrupt.asking)

    def _leave(self, signum: int) -> None:
        """SIGTERM or SIGHUP: stop what is being done (a read, a turn) and leave."""
        self.stop.note(signum)
        self._stopped.set()
        if self._doing is not None:
            self._doing.cancel()

    async def _read(self, prompt: str) -> str:
        reading = asyncio.ensure_future(self.reader.read(prompt))
        self._doing = reading
        try:
            return await reading
        finally:
            self._doing = None

    def command(self, text: str) -> None:
        """Answer a slash command here; an unknown one is never sent to the model."""
        name = text.split()[0]
        if name == "/help":
            for command, what in SLASH_COMMANDS.items():
                self.err.print(f"  {command:<10} {escape(what)}")
        elif name == "/toolsets":
            enabled = ", ".join(sorted(self.session.toolsets.enabled)) or "none"
            self.err.print(f"toolsets: {sanitize_markup(enabled)}")
        elif name == "/todo":
            store = self.session.context.todo_store
            items = store.snapshot().items if store is not None else []
            if not items:
                self.err.print("The todo list is empty.")
            for item in items:
                self.err.print(f"  [{item.status}] {sanitize(item.content)}", markup=False)
        elif name == "/clear":  # a new session: empty history and todo list, stored anew
            fresh = new_terminal_session(self.agent, interactive=True, interrupt=self.interrupt)
            self.agent.end_session(self.session)
            self.session, self.stored_id = fresh, None
            self.renderer = self._new_renderer()  # each todo revision shows once: they restart
            self.err.print("Started a new conversation; the last one stays in `neta logs`.")
        elif name == "/session":
            if self.stored_id is None:
                self.err.print("Nothing said yet: the conversation is stored from its first turn.")
            else:
                back = f"session {self.stored_id} (`neta chat --session {self.stored_id}`)"
                self.err.print(back, soft_wrap=True)  # one line, to copy whole
        else:
            self.err.print(f"Unknown command {sanitize_markup(name)}; /help lists the commands.")

    async def turn(self, line: str) -> None:
        """Run one turn; Ctrl-C cancels it (its tools too) and keeps the conversation.

        Ctrl-C while a question waits for an answer cancels just the question.
        """
        if self.stored_id is None:
            self.stored_id = self.conversations.start(
                self.agent.workspace, "chat", line, self.model
            )
            self.session.context.session_id = self.stored_id
        events: list[Any] = []
        spent_before = self.session.meter.snapshot()
        task = self._doing = asyncio.ensure_future(self._run(line, events))

        def ctrl_c(_: int) -> None:
            if not self.interrupt.cancel_question():
                task.cancel()

        with on_signals(ctrl_c, (signal.SIGINT,)):
            try:
                result = await task
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise
                signum = self.stop.signum or signal.SIGINT
                spent = self.session.meter.since(spent_before)
                stopped = stopped_result(self.session, events, signum, spent)
                kept = remember(self.conversations, self.session, stopped, self.model)
                with while_the_terminal_lasts():
                    self.renderer.finish_line()
                    self.err.print("[dim]Turn cancelled; the conversation so far is kept.[/]")
                    if not kept:
                        self.err.print(NOT_KEPT, markup=False, soft_wrap=True)
                return
            finally:
                self._doing = None
        kept = remember(self.conversations, self.session, result, self.model)
        show_outcome(result, streamed=self.renderer.answer_on_stdout)
        if not kept:
            self.err.print(NOT_KEPT, markup=False, soft_wrap=True)

    async def _run(self, line: str, events: list[Any]) -> RunResult:
        def on_event(event: Any) -> None:
            events.append(event)
            self.renderer(event)

        async with keep_waiting_notice(self.renderer):
            return await self.agent.run(line, session=self.session, on_event=on_event)


def _toolsets_fitting(names: list[str], room: int) -> str:
    """``toolsets: a, b, +3 more`` in ``room`` characters, or just how many there are."""
    if not names:
        return "toolsets: none"
    for shown in range(len(names), 0, -1):
        more = f", +{len(names) - shown} more" if shown < len(names) else ""
        text = f"toolsets: {', '.join(names[:shown])}{more}"
        if cell_len(text) <= room:
            return text
    return f"{len(names)} toolset{'s' if len(names) > 1 else ''}"


def _shorten(model: str, where: str, room: int) -> tuple[str, str]:
    """``model`` and ``where`` in ``room`` characters together; the shorter one keeps its share."""
    if cell_len(model) + cell_len(where) <= room:
        return model, where
    half = room // 2
    if cell_len(model) <= half:
        return model, _cut(where, room - cell_len(model))
    if cell_len(where) <= half:
        return _cut(model, room - cell_len(where)), where
    return _cut(model, half), _cut(where, room - half)


def _cut(text: str, most: int) -> str:
    """``text`` in ``most`` columns (a wide character takes two), ending in … when cut."""
    if cell_len(text) <= most:
        return text
    return set_cell_size(text, most - 1).rstrip() + "…"
