"""``Agent``: the Python API host apps use (the CLI, the gateway, REST, the crew all do)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Unpack, cast

from neta import tracing
from neta.catalog import ToolSchema
from neta.errors import ConfigError, OutputValidationError
from neta.events import Event, ModelFallback, ProviderRetry
from neta.host_settings import TRUST_OPTION
from neta.images import ImagePart, fit_images
from neta.messages import Message, close_interrupted_calls
from neta.permissions import (
    ApprovalAnswer,
    PermissionsLike,
    Policy,
    given_rules,
    policy_for,
)
from neta.plugins import NetaPluginManager, create_plugin_manager
from neta.providers.base import Provider, ToolDefinition
from neta.providers.client_pool import ClientPool, active_pool
from neta.providers.fallback import (
    FallbackNotice,
    FallbackProvider,
    ModelEntry,
    fallback_models,
    model_label,
)
from neta.providers.image_input import TextOnlyProvider, takes_images
from neta.providers.registry import create_provider, resolve_model_name
from neta.providers.retry import RetryingProvider, RetryNotice, RetryPolicy
from neta.runtime.attempt import Checkpoint, run_attempt, safe_event_sink
from neta.runtime.compaction import compact_history
from neta.runtime.crew import CrewRunner
from neta.runtime.deferred import answers_by_call, resumed_calls
from neta.runtime.gate import Gate
from neta.runtime.limits import (
    DEFAULT_MAX_TURNS,
    DEFAULT_OUTPUT_LIMIT,
    DEFAULT_TOOL_TIMEOUT,
    DEFAULT_TURN_TIMEOUT,
    RunLimits,
)
from neta.runtime.metering import Meter, MeteredProvider
from neta.runtime.output import Output, OutputType, prepared
from neta.runtime.prompt_builder import build_system_prompt
from neta.runtime.reply_check import (
    DEFAULT_MAX_CALLS_PER_REPLY,
    DEFAULT_MAX_REPLY_CHARS,
    repair_history,
)
from neta.runtime.run_result import OutputT, RunResult
from neta.runtime.run_scope import entered, run_scope
from neta.runtime.run_stream import DEFAULT_STREAM_BUFFER, RunStream
from neta.runtime.usage_limits import UsageLimits
from neta.sandbox import SandboxPolicy, sandbox_policy
from neta.session import ClarifyFn, EntryKind, SessionCapabilities, SessionContext
from neta.session_tools import BoundTool, build_session_tools, resolve_session_toolsets
from neta.todos import InMemoryTodoStore
from neta.toolsets import ToolsetResolution, resolve_toolsets

if TYPE_CHECKING:
    from neta.tracing.spans import RunSpan, Tracing

__all__ = ["Agent", "AgentSession", "EventCallback", "RunResult"]

EventCallback = Callable[[Event], None]
"""Receives each event of a run, synchronously, on the event loop's thread."""


_OfferedCache = dict[
    tuple[tuple[int, ...], bool], tuple[tuple[ToolSchema, ...], list[ToolDefinition]]
]
"""Tools lists by the identity of their schemas (which the entry keeps alive)."""


@dataclass
class AgentSession:
    """A conversation: its context (what tools close over), its tools and its history."""

    context: SessionContext
    toolsets: ToolsetResolution
    tools: dict[str, BoundTool]
    history: list[Message] = field(default_factory=list)
    provider: Provider | None = None
    checkpoint: Checkpoint | None = None
    """Awaited before each model call and before a turn's tool calls run (a host saves the
    session there); what it raises ends the run before anything else happens."""
    meter: Meter = field(default_factory=Meter)
    """What the session's model calls cost so far, its sub-agents' apart (a cancelled run's too)."""
    usage_limits: UsageLimits | None = None
    """What the session may spend over all its runs (``new_session(usage_limits=...)``)."""
    _sink: EventCallback | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _loop: asyncio.AbstractEventLoop | None = None  # the running run's loop
    # built once per session: the tools never change, the prompt only with the date
    _offered: dict[bool, list[ToolDefinition]] = field(default_factory=dict)
    _prompt: tuple[dt.date, str] | None = None
    _policy_read: bool = False  # a run's gate took the session's policy once already
    _checked: int = 0  # how many messages of the history were checked (``repair_history``)
    _asking: asyncio.Lock = field(default_factory=asyncio.Lock)  # one approval at a time

    def offered_tools(self, *, strict: bool = False) -> list[ToolDefinition]:
        """The session's tools in the OpenAI ``tools`` format (their JSON schemas built once)."""
        offered = self._offered.get(strict)
        if offered is None:
            offered = [b.schema.openai_tool(strict=strict) for b in self.tools.values()]
            self._offered[strict] = offered
        return offered

    def _share_offered_tools(self, cache: _OfferedCache, strict: bool) -> None:
        """Take the tools list from ``cache`` (sessions with the same tools share one)."""
        if strict in self._offered:
            return
        schemas = tuple(b.schema for b in self.tools.values())
        # the same schema objects (the catalog's), the same JSON; the entry keeps them alive,
        # so their ids cannot be reused while it exists
        key = (tuple(id(schema) for schema in schemas), strict)
        found = cache.get(key)
        if found is None:
            found = cache[key] = (schemas, self.offered_tools(strict=strict))
        self._offered[strict] = found[1]

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self.context.session_id

    @property
    def busy(self) -> bool:
        """Whether a run is in progress."""
        return self._lock.locked()

    def dispatch(self, event: Event) -> None:
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
            takes the provider from a ``provider:model`` name, or, without one, builds
            sessions that can be inspected but not run (``neta toolsets`` does this).
        model: the model name sent to the provider; ``provider:model`` (``openai:gpt-4o``)
            names the provider too (it must agree with ``provider`` when both are given). A
            list names fallback models after the first (``["anthropic:claude-sonnet-4-5",
            "openai:gpt-4o"]``): when a request to one fails for good, the next is asked
            (``neta.providers.fallback``; a ``model_fallback`` event says so). A fallback
            without a ``provider:`` prefix asks the first model's provider;
            ``provider_options`` go to the first model's provider only.
        toolsets: toolsets requested on top of the defaults.
        preset: when given, exactly these toolsets instead of the defaults.
        deny: toolsets never given (deny wins).
            A toolset name none of the plugins has raises ``ConfigError`` here, before any
            session starts; only ``deny`` accepts one unlike every installed toolset's name.
            When ``toolsets``, ``preset`` or ``deny`` are given, plugins get them too, as the
            host option ``"toolsets"`` (``{"preset", "requested", "denied"}``), so that one
            starting something per toolset (a server) starts only what a session may get.
        workspace: the root every file tool is confined to.
        plugin_manager: the plugins to use; by default all installed ones.
        entry: how sessions are started (``cli``, ``gateway``, ``service``, ``crew``).
        max_turns: model turns per run before it stops with outcome ``max_turns``.
        tool_timeout: seconds a tool call may take unless the tool sets its own.
        output_limit: characters of a tool's output the model sees (head and tail kept).
        strict_schemas: send tool schemas in OpenAI strict mode.
        system_extras: host text appended to the system prompt.
        compact_after: when a session's history holds more messages than this before a model
            turn (as a run starts, or between its turns), all but the newest half is replaced
            by one note (``None``: never).
        crew_depth: how deep sub-agents may nest: sessions shallower than this get a crew
            runner (1: top-level sessions have children, children have none; 0: no crew).
        crew_concurrency: how many children of one session run at once.
        crew_timeout: seconds a child may take (a parallel delegation as a whole, too).
        retry: how failed model requests are tried again (rate limits, 5xx, dropped
            connections): ``RetryPolicy(max_tries=...)``; each retry emits ``provider_retry``.
        model_timeout: seconds the model server may stay silent (per read); passed to a
            provider given by name as its ``timeout`` option (``None``: the provider's default).
        turn_timeout: seconds one model turn may take in all, however the server trickles
            (``None``: no limit); past it the run ends with outcome ``error``.
        max_calls_per_reply: tool calls of one reply that run; the model is told about the rest.
        max_reply_chars: characters of one reply accepted; a larger one runs no calls and the
            model is told to write less.
        mcp_servers: MCP servers for this host, in the ``mcpServers`` format of ``mcp.json``
            (name → ``{"command", "args", "env", "cwd"}`` or ``{"url", "headers"}``); handed
            to plugins as the host option ``"mcp_servers"`` (the ``mcp`` plugin reads it).
        sandbox: how commands the model runs are confined: ``"on"`` (the default: bubblewrap,
            no network), ``"off"`` (the host's full authority), a mapping of
            ``SandboxPolicy`` fields (``{"network": True}``) or a ``SandboxPolicy``. Every
            session gets it (``new_session(sandbox=...)`` overrides it for one); plugins get
            it as the host option ``"sandbox"`` (MCP servers from a workspace file use it).
        trust_workspace: whether the workspace's own configuration (``.neta/mcp.json``,
            ``.neta/skills``, ``.neta/permissions.toml``) is used: ``True``, ``False``, or
            ``None`` (the default) for what the user's record of trusted workspaces says
            (``neta trust``; ``neta.trust``).
        permissions: which tool calls run, which ask a person first, which are refused
            (``neta.permissions``): a mode's name (``"ask"``, the default; ``"auto-edit"``,
            ``"auto"``, ``"read-only"``), a mapping shaped like a rules file
            (``{"mode": "ask", "allow": ["bash(pytest *)"]}``), a ``RuleSet`` or a whole
            ``Policy``. Rules given here are tried before the user's
            (``NETA_HOME/permissions.toml``), the "allow always" answers kept for the
            workspace, and the workspace's ``.neta/permissions.toml`` (which may only narrow
            unless the workspace is trusted); a ``Policy`` is used alone. Hosts may add rules
            with the host option ``"permissions"`` (a mapping), tried after these.
        limits: ``max_turns``, ``tool_timeout``, ``output_limit``, ``strict_schemas``,
            ``turn_timeout``, ``max_calls_per_reply`` and ``max_reply_chars`` as one
            ``RunLimits`` (kept as ``Agent.limits``); when given, it wins over those keywords,
            which are then ignored.
        usage_limits: what each run may spend (tokens, model and tool calls, seconds) before
            it stops with outcome ``limit``: a ``UsageLimits``; ``run(usage_limits=...)``
            replaces it for one run.
        name: what traces call the agent (``gen_ai.agent.name``, in the span
            ``invoke_agent NAME`` of each run; ``neta.tracing``); empty: unnamed.
    """

    def __init__(
        self,
        *,
        provider: Provider | str | None = None,
        model: str | Sequence[str] = "",
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
        provider_options: Mapping[str, object] | None = None,
        compact_after: int | None = None,
        crew_depth: int = 1,
        crew_concurrency: int = 3,
        crew_timeout: float = 600.0,
        retry: RetryPolicy | None = None,
        model_timeout: float | None = None,
        turn_timeout: float | None = DEFAULT_TURN_TIMEOUT,
        max_calls_per_reply: int = DEFAULT_MAX_CALLS_PER_REPLY,
        max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS,
        mcp_servers: Mapping[str, Mapping[str, object]] | None = None,
        sandbox: SandboxPolicy | str | bool | Mapping[str, object] | None = None,
        trust_workspace: bool | None = None,
        permissions: PermissionsLike = None,
        limits: RunLimits | None = None,
        usage_limits: UsageLimits | None = None,
        name: str = "",
    ) -> None:
        self.name = name
        self.sandbox = sandbox_policy(sandbox)
        given_rules(permissions)  # a mistake fails here, not at the first tool call
        self.permissions = permissions
        self.pm = plugin_manager if plugin_manager is not None else create_plugin_manager()
        host_options: dict[str, object] = {"sandbox": self.sandbox}
        toolsets, deny = tuple(toolsets), tuple(deny)
        preset = None if preset is None else tuple(preset)
        if toolsets or deny or preset is not None:
            host_options["toolsets"] = {"preset": preset, "requested": toolsets, "denied": deny}
        if trust_workspace is not None:
            host_options[TRUST_OPTION] = trust_workspace
        if mcp_servers:
            host_options["mcp_servers"] = dict(mcp_servers)
        self.pm.configure_host(Path(workspace).resolve(), host_options)
        model, *fallbacks = (model,) if isinstance(model, str) else tuple(model) or ("",)
        if provider is None or isinstance(provider, str):
            provider, model = resolve_model_name(provider, model, self.pm)
        named = provider if isinstance(provider, str) else None
        if isinstance(provider, str):
            options = dict(provider_options or {})
            if model_timeout is not None:
                options.setdefault("timeout", model_timeout)
            provider = create_provider(provider, self.pm, model=model, **options)
        self.provider: Provider | None = provider
        self.model = model
        self.fallbacks = fallback_models(
            fallbacks,
            provider=named or provider,
            pm=self.pm,
            options=provider_options or {},
            timeout=model_timeout,
        )
        """The models asked when the first fails for good, in order (``model=[...]``)."""
        self.model_label = model_label(named, model, provider)
        """The first model as events name it (``openai:gpt-4o``)."""
        self.requested = tuple(toolsets)
        self.preset = None if preset is None else tuple(preset)
        self.deny = tuple(deny)
        # an unknown toolset name fails here, once, rather than each session it would start;
        # after the provider, whose mistakes are told without the plugins' start-up (servers)
        resolve_toolsets(
            self.pm.toolset_specs(), preset=self.preset, requested=self.requested, denied=self.deny
        )
        self.workspace = Path(workspace).resolve()
        self.entry: EntryKind = entry
        if limits is None:
            limits = RunLimits(
                max_turns=max_turns,
                tool_timeout=tool_timeout,
                output_limit=output_limit,
                turn_timeout=turn_timeout,
                max_calls_per_reply=max_calls_per_reply,
                max_reply_chars=max_reply_chars,
                strict_schemas=strict_schemas,
            )
        self.limits = limits
        self.usage_limits = usage_limits
        """What each run may spend (``Agent.run(usage_limits=...)`` replaces it for one run)."""
        self.system_extras = tuple(system_extras)
        self.compact_after = compact_after
        self.crew_depth = crew_depth
        self.crew_concurrency = crew_concurrency
        self.crew_timeout = crew_timeout
        self.retry = retry or RetryPolicy()
        # the tools lists sent to the model, by their schemas: every session with the same
        # tools shares one
        self._offered: _OfferedCache = {}

    @property
    def max_turns(self) -> int:
        """Model turns per run (``limits.max_turns``)."""
        return self.limits.max_turns

    @property
    def tool_timeout(self) -> float:
        """Seconds a tool call may take unless the tool sets its own (``limits.tool_timeout``)."""
        return self.limits.tool_timeout

    @property
    def output_limit(self) -> int:
        """Characters of a tool's output the model sees (``limits.output_limit``)."""
        return self.limits.output_limit

    @property
    def strict_schemas(self) -> bool:
        """Whether tool schemas are sent in OpenAI strict mode (``limits.strict_schemas``)."""
        return self.limits.strict_schemas

    @property
    def turn_timeout(self) -> float | None:
        """Seconds one model turn may take (``limits.turn_timeout``)."""
        return self.limits.turn_timeout

    @property
    def max_calls_per_reply(self) -> int:
        """Tool calls of one reply that run (``limits.max_calls_per_reply``)."""
        return self.limits.max_calls_per_reply

    @property
    def max_reply_chars(self) -> int:
        """Characters of one reply accepted (``limits.max_reply_chars``)."""
        return self.limits.max_reply_chars

    def policy(self) -> Policy:
        """The permission policy in force now for this agent's workspace (files read anew).

        Raises:
            ConfigError: a rules file cannot be read or holds something that is no rule.
        """
        host = self.pm.host
        extra = host.options.get("permissions")
        return policy_for(
            self.workspace,
            given=self.permissions,
            host=extra if isinstance(extra, Mapping) else None,
            trusted=host.workspace_trusted(),
        )

    def new_session(
        self,
        *,
        session_id: str | None = None,
        entry: EntryKind | None = None,
        clarify: ClarifyFn | None = None,
        history: Iterable[Message] = (),
        provider: Provider | None = None,
        toolsets: Iterable[str] | None = None,
        usage_limits: UsageLimits | None = None,
        **capabilities: Unpack[SessionCapabilities],
    ) -> AgentSession:
        """Start a session: build its context and tools, and tell the plugins it started.

        ``capabilities`` are ``SessionContext`` fields (``todo_store``, ``crew_runner``,
        ``memory_store``, ``user_channel``, ``depth``, ``extras``...). Without a ``todo_store``
        the session gets an ``InMemoryTodoStore`` (pass ``todo_store=None`` for none).
        ``provider`` replaces the agent's provider for this session (e.g. a fresh scripted one).
        ``toolsets``, when given, are exactly the session's toolsets instead of the agent's
        preset and requested ones (denied ones stay denied; crew children get theirs so).
        A session shallower than ``crew_depth`` gets a ``CrewRunner`` unless a ``crew_runner``
        is passed (``crew_runner=None`` for none). ``usage_limits`` is what the session may
        spend over all its runs (``AgentSession.usage_limits``).
        """
        capabilities.setdefault("todo_store", InMemoryTodoStore())
        capabilities.setdefault("sandbox", self.sandbox)
        capabilities.setdefault("permissions", self.policy())
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
            session.usage_limits = usage_limits
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
        """The system prompt for ``session``, from the tools it actually has.

        Built once per session and day (it names the date); the tools never change.
        """
        today = dt.date.today()
        if session._prompt is not None and session._prompt[0] == today:
            return session._prompt[1]
        prompt = build_system_prompt(
            catalog=self.pm.catalog(),
            tool_names=list(session.tools),
            session=session.context,
            extras=self.system_extras,
            today=today,
            session_guidance={n: b.tool.session_guidance for n, b in session.tools.items()},
        )
        session._prompt = (today, prompt)
        return prompt

    def _offered_tools(self, session: AgentSession) -> list[ToolDefinition]:
        if len(self._offered) > 256:  # sessions built with unusual tools: start over
            self._offered.clear()
        strict = self.limits.strict_schemas
        session._share_offered_tools(self._offered, strict)
        return session.offered_tools(strict=strict)

    def _compact(self, session: AgentSession, history: list[Message]) -> None:
        if self.compact_after is None or len(history) <= self.compact_after:
            return
        history[:] = compact_history(
            history,
            keep_last=max(1, self.compact_after // 2),
            todo_store=session.context.todo_store,
        )

    def _provider_for(self, session: AgentSession) -> Provider:
        provider = session.provider or self.provider
        if provider is None:
            raise ConfigError("this agent has no model provider; pass provider= to Agent")
        return provider

    def _models_for(
        self,
        session: AgentSession,
        on_retry: Callable[[RetryNotice], None],
        on_fallback: Callable[[FallbackNotice], None],
        tracer: Tracing | None = None,
    ) -> Provider:
        """What a run asks: each model metered and retried, sent images only if it takes them.

        The agent's fallback models follow the first, unless the session has its own provider.
        With ``tracer``, each call of each model is a span.
        """

        def ready(provider: Provider) -> Provider:
            asked = provider if tracer is None else tracer.traced(provider, session.session_id)
            if not takes_images(provider):
                asked = TextOnlyProvider(asked)
            metered = MeteredProvider(asked, session.meter)
            return RetryingProvider(metered, self.retry, on_retry)

        first = self._provider_for(session)
        if session.provider is not None or not self.fallbacks:
            return ready(first)
        models = [ModelEntry(self.model_label, first, self.model), *self.fallbacks]
        return FallbackProvider(
            [dataclasses.replace(m, provider=ready(m.provider)) for m in models], on_fallback
        )

    async def run(
        self,
        message: str,
        *,
        session: AgentSession | None = None,
        on_event: EventCallback | None = None,
        approvals: Mapping[str, ApprovalAnswer | str] | None = None,
        images: Sequence[ImagePart] = (),
        output_type: OutputType[OutputT] | None = None,
        usage_limits: UsageLimits | None = None,
    ) -> RunResult[OutputT]:
        """Add ``message`` to the session (a new one by default) and run until the model answers.

        ``output_type`` (a pydantic model, a dataclass, a ``TypedDict``, or a JSON Schema of an
        object as a dict) is what the final answer must be: the model is asked for it through
        its provider's structured output where it has one, else through the tool
        ``final_result``, and ``RunResult.output`` holds it, validated. An invalid answer is
        sent back with what is wrong, ``limits.output_retries`` times at most.

        ``usage_limits`` replaces the agent's for this run; the session's hold too.

        ``images`` go with ``message`` (``ImagePart.from_file``): each is named in its text by
        its placeholder, and what passes ``MAX_MESSAGE_IMAGE_BYTES`` is left out, saying so.

        ``approvals`` answer the calls a previous run left waiting (``RunResult.approvals``),
        by request id: an ``ApprovalAnswer`` or its text (``"allow once"``, ``"deny: why"``).
        Those calls run (or are denied) first, then ``message``, when not empty, is added and
        the model goes on. A call left unanswered waits again.

        Raises:
            ConfigError: ``approvals`` names a call that does not wait for approval, or
                ``output_type`` cannot be one.
            OutputValidationError: the model never gave a valid answer of ``output_type``.

        One run per session at a time: a second concurrent call waits for the first. Outside a
        host's ``ClientPool`` the run keeps one of its own, so its turns share one model-API
        client, closed when the run ends.
        """
        output = prepared(output_type) if output_type is not None else None
        session = session if session is not None else self.new_session()
        events: list[Event] = []
        listener = safe_event_sink(on_event) if on_event is not None else None
        tracer = tracing.active()  # decided once per run: None, and tracing costs nothing
        traced: RunSpan | None = None

        def sink(event: Event) -> None:
            events.append(event)
            if traced is not None:
                traced.event(event)
            if listener is not None:
                listener(event)

        agent_id = None if session.context.depth == 0 else session.session_id

        def retrying(notice: RetryNotice) -> None:
            session.dispatch(
                ProviderRetry(
                    attempt=notice.attempt,
                    max_tries=notice.max_tries,
                    delay=notice.delay,
                    reason=notice.reason,
                    message=str(notice.error),
                    agent_id=agent_id,
                )
            )

        def falling_back(notice: FallbackNotice) -> None:
            session.dispatch(
                ModelFallback(
                    failed=notice.failed,
                    model=notice.model,
                    reason=notice.reason,
                    message=str(notice.error),
                    agent_id=agent_id,
                )
            )

        # a run outside a host still shares one model-API client between its turns
        own_pool = ClientPool() if active_pool() is None else None
        async with session._lock, contextlib.AsyncExitStack() as stack:
            if own_pool is not None:
                stack.push_async_callback(own_pool.aclose)
                stack.enter_context(own_pool.active())
            session._sink = sink
            session._loop = asyncio.get_running_loop()
            spent_before = session.meter.snapshot()  # what runs before this one spent is theirs
            limits = self.usage_limits if usage_limits is None else usage_limits
            scope = run_scope(session.meter, spent_before, limits, session.usage_limits)
            stack.enter_context(entered(scope))
            if tracer is not None:
                traced = stack.enter_context(self._run_span(tracer, session, agent_id))
            outcome = "error"
            try:
                repair_history(session.history, checked=session._checked)
                waiting = resumed_calls(session.history, approvals)
                resume = list(waiting.values())
                if message and approvals and set(approvals) != set(waiting):
                    raise ConfigError(
                        "answer every call that waits for approval before sending a message "
                        f"(waiting: {', '.join(waiting)})"
                    )
                text, attached = fit_images(message, images) if images else (message, [])
                follow_up = Message(role="user", content=text, images=attached)
                if not resume:
                    close_interrupted_calls(session.history)
                    session.history.append(follow_up)
                gate = Gate(
                    lambda: self._refreshed_policy(session),
                    session.context,
                    session.dispatch,
                    agent_id=agent_id,
                    answers=answers_by_call(approvals, waiting, session.context.workspace),
                    asking=session._asking,
                )
                result = await run_attempt(
                    provider=self._models_for(session, retrying, falling_back, tracer),
                    system_prompt=self.system_prompt(session),
                    history=session.history,
                    tools=session.tools,
                    on_event=session.dispatch,
                    limits=self.limits,
                    model=self.model,
                    session_id=session.session_id,
                    agent_id=agent_id,
                    offered_tools=self._offered_tools(session),
                    before_turn=lambda history: self._compact(session, history),
                    gate=gate,
                    resume=resume,
                    follow_up=follow_up if resume and message else None,
                    checkpoint=scope.paced(session.checkpoint),
                    output=cast("Output[object] | None", output),
                    limit_check=scope.limit_check(),
                    tracing=tracer,
                )
                outcome = result.outcome
                if traced is not None:
                    traced.finished(
                        outcome,
                        turns=result.turns,
                        usage=result.usage,
                        reason=result.reason,
                        error=result.error,
                    )
            except asyncio.CancelledError:
                outcome = "cancelled"
                raise
            finally:
                session._checked = len(session.history)  # every message now stored was checked
                session._sink = None
                session._loop = None
                # plugins stop what the run started (the base plugin: a cancelled run's processes)
                self.pm.notify("neta_run_end", session=session.context, outcome=outcome)
        spent = session.meter.since(spent_before)
        ended: RunResult[OutputT] = RunResult(
            text=result.text,
            outcome=result.outcome,
            reason=result.reason,
            messages=list(session.history),
            events=events,
            usage=result.usage,
            turns=result.turns,
            session_id=session.session_id,
            denials=list(gate.denials),
            approvals=list(gate.pending),
            sub_agent_calls=spent.sub_agent_calls,
            sub_agent_usage=spent.sub_agent_usage,
            output=cast("OutputT | None", result.output),
            limit=result.limit,
        )
        if result.rejected is not None:
            rejected = result.rejected
            raise OutputValidationError(
                rejected.answer, rejected.errors, attempts=rejected.attempts, result=ended
            )
        return ended

    def _run_span(
        self, tracer: Tracing, session: AgentSession, agent_id: str | None
    ) -> contextlib.AbstractContextManager[RunSpan]:
        """The span of a run of ``session`` (``agent_id``: a crew child's)."""
        return tracer.run(
            session_id=session.session_id,
            agent_name=self.name,
            agent_id=agent_id,
            depth=session.context.depth,
            provider=session.provider or self.provider,
            model=self.model,
        )

    def stream(
        self,
        message: str,
        *,
        session: AgentSession | None = None,
        approvals: Mapping[str, ApprovalAnswer | str] | None = None,
        output_type: OutputType[OutputT] | None = None,
        usage_limits: UsageLimits | None = None,
        buffer: int = DEFAULT_STREAM_BUFFER,
    ) -> RunStream[OutputT]:
        """A run whose events are read as they come, as ``run`` would run it.

        ::

            async with agent.stream("fix the tests", session=session) as run:
                async for event in run:
                    ...
            print(run.result.outcome)

        The run starts as the block is entered; leaving it early cancels the run. At most
        about ``buffer`` events wait for the reader: a slower reader makes the run wait
        (``RunStream``).

        Raises:
            ConfigError: ``buffer`` is below 1.
        """
        if buffer < 1:
            raise ConfigError(f"a stream's buffer holds at least 1 event, not {buffer}")
        session = session if session is not None else self.new_session()

        async def start(on_event: EventCallback) -> RunResult[OutputT]:
            return await self.run(
                message,
                session=session,
                on_event=on_event,
                approvals=approvals,
                output_type=output_type,
                usage_limits=usage_limits,
            )

        return RunStream(start, buffer)

    def _refreshed_policy(self, session: AgentSession) -> Policy:
        """The session's policy; after an "allow always", read anew (the answer is kept)."""
        if session._policy_read:
            session.context.permissions = self.policy()
        session._policy_read = True
        return session.context.permissions


def _running_on(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:  # no loop in this thread: a worker thread
        return False
