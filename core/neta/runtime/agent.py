"""``Agent``: the Python API host apps use (the CLI, the gateway, REST, the crew all do)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neta.errors import ConfigError
from neta.events import Outcome
from neta.messages import Message, Usage, close_interrupted_calls
from neta.plugins import NetaPluginManager, create_plugin_manager
from neta.providers.base import Provider
from neta.providers.registry import create_provider
from neta.runtime.attempt import (
    DEFAULT_MAX_TURNS,
    DEFAULT_OUTPUT_LIMIT,
    DEFAULT_TOOL_TIMEOUT,
    run_attempt,
    safe_event_sink,
)
from neta.runtime.compaction import compact_history
from neta.runtime.crew import CrewRunner
from neta.runtime.prompt_builder import build_system_prompt
from neta.session import ClarifyFn, EntryKind, SessionContext
from neta.session_tools import BoundTool, build_session_tools, resolve_session_toolsets
from neta.todos import InMemoryTodoStore
from neta.toolsets import ToolsetResolution

EventCallback = Callable[[Any], None]
"""Receives each event of a run, synchronously, on the event loop's thread."""


@dataclass(frozen=True)
class RunResult:
    """What one ``Agent.run`` produced.

    Attributes:
        text: the final reply (the question, when ``outcome`` is ``awaiting_input``).
        outcome: how the run ended.
        reason: why, in words, when it did not simply complete.
        messages: the session's whole history after the run.
        events: every event the run emitted, in order.
        usage: tokens summed over the run's turns.
        turns: how many times the model was asked.
        session_id: the session the run belonged to.
    """

    text: str
    outcome: Outcome
    reason: str
    messages: list[Message]
    events: list[Any]
    usage: Usage
    turns: int
    session_id: str


@dataclass
class AgentSession:
    """A conversation: its context (what tools close over), its tools and its history."""

    context: SessionContext
    toolsets: ToolsetResolution
    tools: dict[str, BoundTool]
    history: list[Message] = field(default_factory=list)
    provider: Provider | None = None
    _sink: EventCallback | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _loop: asyncio.AbstractEventLoop | None = None  # the running run's loop

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self.context.session_id

    @property
    def busy(self) -> bool:
        """Whether a run is in progress."""
        return self._lock.locked()

    def dispatch(self, event: Any) -> None:
        """Route an event from a tool or the loop to the current run, tagged with this session.

        Safe to call from a worker thread (plain-function tools run in one): the event is
        handed to the run's event loop, which delivers it in the order it was emitted.
        """
        loop = self._loop
        if loop is not None and not _running_on(loop):
            with contextlib.suppress(RuntimeError):  # the loop is gone: so is the run
                loop.call_soon_threadsafe(self.dispatch, event)
            return
        if getattr(event, "session_id", None) == "":
            event = event.model_copy(update={"session_id": self.session_id})
        if self._sink is not None:
            self._sink(event)


class Agent:
    """An agent: a provider, a model, the plugins' tools, and the rules for sessions.

    Args:
        provider: a ``Provider`` instance or a provider name (``openai``, ``scripted``, or one
            a plugin registers); ``provider_options`` are passed to its factory. ``None``
            builds sessions that can be inspected but not run (``neta toolsets`` does this).
        model: the model name sent to the provider.
        toolsets: toolsets requested on top of the defaults.
        preset: when given, exactly these toolsets instead of the defaults.
        deny: toolsets never given (deny wins).
        workspace: the root every file tool is confined to.
        plugin_manager: the plugins to use; by default all installed ones.
        entry: how sessions are started (``cli``, ``gateway``, ``service``, ``crew``).
        max_turns: model turns per run before it stops with outcome ``max_turns``.
        tool_timeout: seconds a tool call may take unless the tool sets its own.
        output_limit: characters of a tool's output the model sees (head and tail kept).
        strict_schemas: send tool schemas in OpenAI strict mode.
        system_extras: host text appended to the system prompt.
        compact_after: when a session's history holds more messages than this as a run
            starts, all but the newest half is replaced by one note (``None``: never).
        crew_depth: how deep sub-agents may nest: sessions shallower than this get a crew
            runner (1: top-level sessions have children, children have none; 0: no crew).
        crew_concurrency: how many children of one session run at once.
        crew_timeout: seconds a child may take (a parallel delegation as a whole, too).
        mcp_servers: MCP servers for this host, in the ``mcpServers`` format of ``mcp.json``
            (name → ``{"command", "args", "env", "cwd"}`` or ``{"url", "headers"}``); handed
            to plugins as the host option ``"mcp_servers"`` (the ``mcp`` plugin reads it).
    """

    def __init__(
        self,
        *,
        provider: Provider | str | None,
        model: str = "",
        toolsets: Iterable[str] = (),
        preset: Iterable[str] | None = None,
        deny: Iterable[str] = (),
        workspace: str | Path = ".",
        plugin_manager: NetaPluginManager | None = None,
        entry: EntryKind = "cli",
        max_turns: int = DEFAULT_MAX_TURNS,
        tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
        strict_schemas: bool = False,
        system_extras: Sequence[str] = (),
        provider_options: dict[str, Any] | None = None,
        compact_after: int | None = None,
        crew_depth: int = 1,
        crew_concurrency: int = 3,
        crew_timeout: float = 600.0,
        mcp_servers: Mapping[str, Mapping[str, object]] | None = None,
    ) -> None:
        self.pm = plugin_manager if plugin_manager is not None else create_plugin_manager()
        self.pm.configure_host(
            Path(workspace).resolve(), {"mcp_servers": dict(mcp_servers)} if mcp_servers else {}
        )
        if isinstance(provider, str):
            provider = create_provider(provider, self.pm, model=model, **(provider_options or {}))
        self.provider: Provider | None = provider
        self.model = model
        self.requested = tuple(toolsets)
        self.preset = None if preset is None else tuple(preset)
        self.deny = tuple(deny)
        self.workspace = Path(workspace).resolve()
        self.entry: EntryKind = entry
        self.max_turns = max_turns
        self.tool_timeout = tool_timeout
        self.output_limit = output_limit
        self.strict_schemas = strict_schemas
        self.system_extras = tuple(system_extras)
        self.compact_after = compact_after
        self.crew_depth = crew_depth
        self.crew_concurrency = crew_concurrency
        self.crew_timeout = crew_timeout

    def new_session(
        self,
        *,
        session_id: str | None = None,
        entry: EntryKind | None = None,
        clarify: ClarifyFn | None = None,
        history: Iterable[Message] = (),
        provider: Provider | None = None,
        toolsets: Iterable[str] | None = None,
        **capabilities: Any,
    ) -> AgentSession:
        """Start a session: build its context and tools, and tell the plugins it started.

        ``capabilities`` are ``SessionContext`` fields (``todo_store``, ``crew_runner``,
        ``memory_store``, ``user_channel``, ``depth``, ``extras``...). Without a ``todo_store``
        the session gets an ``InMemoryTodoStore`` (pass ``todo_store=None`` for none).
        ``provider`` replaces the agent's provider for this session (e.g. a fresh scripted one).
        ``toolsets``, when given, are exactly the session's toolsets instead of the agent's
        preset and requested ones (denied ones stay denied; crew children get theirs so).
        A session shallower than ``crew_depth`` gets a ``CrewRunner`` unless a ``crew_runner``
        is passed (``crew_runner=None`` for none).
        """
        capabilities.setdefault("todo_store", InMemoryTodoStore())
        runner = None
        if "crew_runner" not in capabilities and capabilities.get("depth", 0) < self.crew_depth:
            runner = CrewRunner(self, concurrency=self.crew_concurrency, timeout=self.crew_timeout)
            capabilities["crew_runner"] = runner
        context = SessionContext(
            workspace=self.workspace,
            entry=entry or self.entry,
            clarify=clarify,
            **capabilities,
        )
        if session_id:
            context.session_id = session_id
        self.pm.notify("neta_session_start", session=context)  # plugins may equip capabilities
        try:
            resolution = resolve_session_toolsets(
                self.pm,
                context,
                preset=self.preset if toolsets is None else toolsets,
                requested=self.requested if toolsets is None else (),
                denied=self.deny,
            )
            session = AgentSession(context, resolution, {}, list(history), provider)
            if runner is not None:
                runner.bind(session)
            context.emit = session.dispatch
            session.tools = build_session_tools(self.pm, context, resolution.enabled)
        except BaseException:
            self.pm.notify("neta_session_end", session=context)  # what started is cleaned up
            raise
        return session

    def end_session(self, session: AgentSession) -> None:
        """Tell the plugins the session ended (they flush and clean up)."""
        self.pm.notify("neta_session_end", session=session.context)

    def system_prompt(self, session: AgentSession) -> str:
        """The system prompt for ``session``, from the tools it actually has."""
        return build_system_prompt(
            catalog=self.pm.catalog(),
            tool_names=list(session.tools),
            session=session.context,
            extras=self.system_extras,
            session_guidance={n: b.tool.session_guidance for n, b in session.tools.items()},
        )

    def _provider_for(self, session: AgentSession) -> Provider:
        provider = session.provider or self.provider
        if provider is None:
            raise ConfigError("this agent has no model provider; pass provider= to Agent")
        return provider

    async def run(
        self,
        message: str,
        *,
        session: AgentSession | None = None,
        on_event: EventCallback | None = None,
    ) -> RunResult:
        """Add ``message`` to the session (a new one by default) and run until the model answers.

        One run per session at a time: a second concurrent call waits for the first.
        """
        session = session if session is not None else self.new_session()
        events: list[Any] = []
        listener = safe_event_sink(on_event) if on_event is not None else None

        def sink(event: Any) -> None:
            events.append(event)
            if listener is not None:
                listener(event)

        async with session._lock:
            session._sink = sink
            session._loop = asyncio.get_running_loop()
            try:
                close_interrupted_calls(session.history)
                session.history.append(Message(role="user", content=message))
                if self.compact_after is not None and len(session.history) > self.compact_after:
                    session.history[:] = compact_history(
                        session.history,
                        keep_last=max(1, self.compact_after // 2),
                        todo_store=session.context.todo_store,
                    )
                result = await run_attempt(
                    provider=self._provider_for(session),
                    system_prompt=self.system_prompt(session),
                    history=session.history,
                    tools=session.tools,
                    on_event=session.dispatch,
                    model=self.model,
                    max_turns=self.max_turns,
                    tool_timeout=self.tool_timeout,
                    output_limit=self.output_limit,
                    strict_schemas=self.strict_schemas,
                    session_id=session.session_id,
                    agent_id=None if session.context.depth == 0 else session.session_id,
                )
            finally:
                session._sink = None
                session._loop = None
        return RunResult(
            text=result.text,
            outcome=result.outcome,
            reason=result.reason,
            messages=list(session.history),
            events=events,
            usage=result.usage,
            turns=result.turns,
            session_id=session.session_id,
        )


def _running_on(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:  # no loop in this thread: a worker thread
        return False
