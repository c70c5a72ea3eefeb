"""The live sessions of a host process: runs, connections, questions and persistence.

The WebSocket gateway and the REST service both work through one ``SessionHub``. A session
lives in memory while it is used and on disk (``SessionStore``) always, so a restart loses no
conversation.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from neta.errors import ConfigError
from neta.events import ClarifyRequest
from neta.hosting.questions import AnswerRefused, Question, QuestionRegistry
from neta.hosting.store import SessionStore, StoredQuestion, neta_home
from neta.plugins import NetaPluginManager, create_plugin_manager
from neta.providers.base import Provider
from neta.providers.registry import create_provider
from neta.runtime.agent import Agent, AgentSession, RunResult
from neta.session import ClarifyFn
from neta.todos import InMemoryTodoStore

HostEntry = Literal["gateway", "service"]

TIMEOUT_TEXT = (
    "The user did not answer in time. Decide for yourself from what you know and continue."
)


class Busy(Exception):
    """The session already has a run in progress."""


class UnknownSession(Exception):
    """No live or saved session has this id."""


class Outbox(Protocol):
    """Where frames for one client connection go (a queue its writer task drains)."""

    def put(self, frame: dict[str, Any]) -> None:
        """Queue ``frame`` for sending; never blocks."""


@dataclass
class HostConfig:
    """How a host process runs its agents.

    Attributes:
        provider: a provider name (``openai``, ``scripted``...) created once per session.
        provider_options: options for the provider's factory (``script``, ``base_url``...).
        provider_factory: overrides ``provider``: called once per session.
        model: the model name.
        workspace: the root every session's file tools are confined to.
        toolsets: toolsets requested on top of the defaults.
        deny: toolsets never given.
        home: where ``neta.db`` lives (default ``NETA_HOME`` or ``~/.neta``).
        clarify_timeout: seconds a question waits for its answer.
        max_frame_bytes: the largest WebSocket frame accepted.
        max_turns: model turns per run.
        token: the shared secret clients must present (required off loopback).
        plugin_manager: the plugins to use (default: all installed).
    """

    provider: str = "openai"
    provider_options: dict[str, Any] = field(default_factory=dict)
    provider_factory: Callable[[], Provider] | None = None
    model: str = ""
    workspace: Path = field(default_factory=Path.cwd)
    toolsets: Sequence[str] = ()
    deny: Sequence[str] = ()
    home: Path | None = None
    clarify_timeout: float = 20.0
    max_frame_bytes: int = 1 << 20
    max_turns: int = 50
    token: str | None = None
    plugin_manager: NetaPluginManager | None = None


@dataclass
class LiveSession:
    """A session in memory: its agent session, its client connections, its current run."""

    session: AgentSession
    outboxes: set[Outbox] = field(default_factory=set)
    run: asyncio.Task[RunResult] | None = None

    @property
    def running(self) -> bool:
        """Whether a run is in progress."""
        return self.run is not None and not self.run.done()


class SessionHub:
    """Creates, finds, runs and ends sessions for the gateway and the REST service."""

    def __init__(self, config: HostConfig) -> None:
        self.config = config
        self.pm = config.plugin_manager or create_plugin_manager()
        self.store = SessionStore((config.home or neta_home()) / "neta.db")
        self.questions = QuestionRegistry()
        self.agent = Agent(
            provider=self._new_provider(),
            model=config.model,
            toolsets=config.toolsets,
            deny=config.deny,
            workspace=config.workspace,
            plugin_manager=self.pm,
            max_turns=config.max_turns,
        )
        self._live: dict[str, LiveSession] = {}
        # Questions still pending when the process stopped can no longer be answered live;
        # their sessions continue REST-style: the next message is the answer.
        self.cancelled_at_start = self.store.take_questions()

    def _new_provider(self) -> Provider:
        if self.config.provider_factory is not None:
            return self.config.provider_factory()
        options = {"model": self.config.model, **self.config.provider_options}
        return create_provider(self.config.provider, self.pm, **options)

    # -- sessions ---------------------------------------------------------------------------

    def create(self, entry: HostEntry) -> LiveSession:
        """Start a new session; its id is random and unguessable."""
        live = self._open(entry, session_id=None, history=(), todos=None)
        self.store.create(live.session.session_id, entry)
        self._save(live)
        return live

    def get(self, session_id: str) -> LiveSession:
        """The live session ``session_id``, loaded from disk if needed.

        Raises:
            UnknownSession: no such session exists.
        """
        live = self._live.get(session_id)
        if live is not None:
            return live
        saved = self.store.load(session_id)
        if saved is None:
            raise UnknownSession(session_id)
        entry: HostEntry = "gateway" if saved.entry == "gateway" else "service"
        return self._open(entry, session_id, saved.history, saved.todos)

    def _open(
        self, entry: HostEntry, session_id: str | None, history: Sequence[Any], todos: Any
    ) -> LiveSession:
        holder: list[LiveSession] = []
        clarify = self._clarify_for(holder) if entry == "gateway" else None
        todo_store = InMemoryTodoStore.from_json(todos) if todos else InMemoryTodoStore()
        session = self.agent.new_session(
            session_id=session_id,
            entry=entry,
            clarify=clarify,
            history=history,
            todo_store=todo_store,
            provider=self._new_provider(),
            extras={"clarify_timeout": self.config.clarify_timeout + 5},
        )
        live = LiveSession(session)
        holder.append(live)
        self._live[session.session_id] = live
        return live

    async def delete(self, session_id: str) -> None:
        """End a session: cancel its run and questions, tell the plugins, forget it on disk."""
        live = self._live.pop(session_id, None)
        if live is not None:
            await self._stop_run(live)
            for asked in self.questions.forget_session(session_id):
                self._resolved(live, asked, "cancelled")
            self.agent.end_session(live.session)
        self.store.delete(session_id)

    async def shutdown(self) -> None:
        """Stop every run (their state is saved) before the process exits."""
        for live in list(self._live.values()):
            await self._stop_run(live)
            self.agent.end_session(live.session)
        self._live.clear()
        self.store.close()

    # -- runs -------------------------------------------------------------------------------

    def start_run(self, live: LiveSession, text: str) -> asyncio.Task[RunResult]:
        """Start a run of ``text`` in the background; its events go to the session's clients.

        Raises:
            Busy: the session already has a run in progress.
        """
        if live.running:
            raise Busy(live.session.session_id)
        live.run = asyncio.create_task(self._run(live, text))
        return live.run

    async def _run(self, live: LiveSession, text: str) -> RunResult:
        try:
            return await self.agent.run(text, session=live.session, on_event=self._forward(live))
        finally:
            self._save(live)

    async def cancel_run(self, live: LiveSession) -> bool:
        """Cancel the session's run, if any; whether there was one."""
        if not live.running:
            return False
        await self._stop_run(live)
        return True

    async def _stop_run(self, live: LiveSession) -> None:
        if live.run is not None and not live.run.done():
            live.run.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await live.run

    def _forward(self, live: LiveSession) -> Callable[[Any], None]:
        def forward(event: Any) -> None:
            self.publish(live, event_frame(event))

        return forward

    def publish(self, live: LiveSession, frame: dict[str, Any]) -> None:
        """Send ``frame`` to every client connected to the session."""
        for outbox in list(live.outboxes):
            outbox.put(frame)

    def _save(self, live: LiveSession) -> None:
        todo_store = live.session.context.todo_store
        todos = todo_store.to_json() if todo_store is not None else None
        self.store.save(live.session.session_id, live.session.history, todos)

    # -- questions --------------------------------------------------------------------------

    def _clarify_for(self, holder: list[LiveSession]) -> ClarifyFn:
        async def clarify(question: str, choices: Sequence[str] | None) -> str:
            live = holder[0]
            session_id = live.session.session_id
            asked = self.questions.ask(session_id, question, list(choices) if choices else None)
            self.store.add_question(
                StoredQuestion(asked.request_id, session_id, asked.question, asked.choices)
            )
            self._save(live)
            live.session.dispatch(
                ClarifyRequest(
                    request_id=asked.request_id, question=question, choices=asked.choices
                )
            )
            try:
                return await asyncio.wait_for(
                    asyncio.shield(asked.future), self.config.clarify_timeout
                )
            except TimeoutError:
                self.questions.close(asked, "timed_out")
                self._resolved(live, asked, "timed_out")
                return TIMEOUT_TEXT
            except asyncio.CancelledError:
                if asked.state == "pending":
                    self.questions.close(asked, "cancelled")
                    self._resolved(live, asked, "cancelled")
                raise
            finally:
                self.store.remove_question(asked.request_id)

        return clarify

    def answer(self, live: LiveSession, request_id: str, answer: str) -> None:
        """Deliver a client's answer to a question of ``live``'s session.

        Raises:
            AnswerRefused: see ``QuestionRegistry.answer``.
        """
        asked = self.questions.answer(request_id, live.session.session_id, answer)
        self._resolved(live, asked, "answered")

    def _resolved(self, live: LiveSession, asked: Question, outcome: str) -> None:
        self.publish(
            live,
            frame(
                "clarify_resolved",
                live.session.session_id,
                {"requestId": asked.request_id, "outcome": outcome},
            ),
        )

    def pending_questions(self, session_id: str) -> list[dict[str, object]]:
        """The session's unanswered questions, as sent in ``session_ready``."""
        return [q.public() for q in self.questions.pending_for(session_id)]


def frame(kind: str, session_id: str, data: dict[str, Any]) -> dict[str, Any]:
    """A server-to-client frame: ``{"type", "sessionId", "data"}``."""
    return {"type": kind, "sessionId": session_id, "data": data}


def event_frame(event: Any) -> dict[str, Any]:
    """A runtime event as a frame (a clarify request carries the fields clients answer with)."""
    if isinstance(event, ClarifyRequest):
        data: dict[str, Any] = {
            "requestId": event.request_id,
            "question": event.question,
            "choices": event.choices,
        }
    else:
        data = event.model_dump(exclude={"type", "session_id"})
    return frame(event.type, event.session_id, data)


def check_exposure(host: str, token: str | None) -> None:
    """Refuse to serve off loopback without a token."""
    if host not in ("127.0.0.1", "localhost", "::1") and not token:
        raise ConfigError(
            f"binding to {host} exposes the agent to the network: set NETA_TOKEN or --token"
        )


__all__ = [
    "AnswerRefused",
    "Busy",
    "HostConfig",
    "LiveSession",
    "SessionHub",
    "UnknownSession",
    "check_exposure",
    "event_frame",
    "frame",
]
