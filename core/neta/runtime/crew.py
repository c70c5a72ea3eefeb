"""``CrewRunner``: a parent session's children, built by the same agent and the same plugins."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, Protocol, TypeVar, Unpack

from pydantic import BaseModel

from neta.crew import CREW_PARENT, ESCALATED_KEY, ChildResult, ChildStatus
from neta.errors import ConfigError
from neta.events import Event, RunFinished, RunStarted, ToolResultEvent
from neta.messages import Message
from neta.permissions import ApprovalAnswer, ApprovalRequest, ApproveFn, approve_by_clarify
from neta.plugins import NetaPluginManager
from neta.providers.base import Provider
from neta.runtime.metering import Meter
from neta.session import EntryKind, SessionCapabilities, SessionContext
from neta.toolsets import TOOLSET_DEFAULTS, ToolsetResolution

CHILD_TOOLSETS = TOOLSET_DEFAULTS
"""What a child asks for when the parent names nothing (``interaction`` then drops out, since a
child has no user channel: in effect ``base`` and ``planning``)."""

_SUB_AGENT_NOTE = (
    "You are a sub-agent: another agent delegated this task to you. Nobody sees this "
    "conversation but you. Work on your own in the workspace, and finish with a concise report "
    "of what you did and found (files changed, results, anything left open): that final reply "
    "is all the delegating agent will read."
)


_STATUS_OF: dict[str, ChildStatus] = {"max_turns": "max_turns", "cancelled": "cancelled"}


class CrewSession(Protocol):
    """What a ``CrewRunner`` reads of a session, parent or child (an ``AgentSession``)."""

    @property
    def context(self) -> SessionContext:
        """What the session's tools close over."""

    @property
    def toolsets(self) -> ToolsetResolution:
        """The session's toolsets."""

    @property
    def history(self) -> list[Message]:
        """The session's history."""

    @property
    def provider(self) -> Provider | None:
        """The session's own provider, if it replaces the agent's."""

    @property
    def session_id(self) -> str:
        """The session's id."""

    @property
    def meter(self) -> Meter:
        """What the session's model calls cost (a child's is added to its parent's)."""

    @property
    def _asking(self) -> asyncio.Lock:
        """Held while the session asks its user for an approval (one at a time)."""

    def dispatch(self, event: Event) -> None:
        """Route an event to the session's current run."""


class ChildRun(Protocol):
    """What a ``CrewRunner`` reads of a child's finished run (a ``RunResult``)."""

    @property
    def text(self) -> str:
        """The final reply."""

    @property
    def outcome(self) -> str:
        """How the run ended."""

    @property
    def reason(self) -> str:
        """Why, when it did not simply complete."""

    @property
    def messages(self) -> list[Message]:
        """The child's whole history after the run."""

    @property
    def events(self) -> Sequence[Event]:
        """Every event the run emitted, in order."""


_Session = TypeVar("_Session", bound=CrewSession)


class CrewAgent(Protocol[_Session]):
    """What a ``CrewRunner`` needs of the agent that builds and runs the children (an ``Agent``)."""

    @property
    def pm(self) -> NetaPluginManager:
        """The agent's plugins (the child-only toolsets are theirs)."""

    def new_session(
        self,
        *,
        session_id: str | None = None,
        entry: EntryKind | None = None,
        provider: Provider | None = None,
        toolsets: Iterable[str] | None = None,
        **capabilities: Unpack[SessionCapabilities],
    ) -> _Session:
        """Start a session (``Agent.new_session``)."""

    async def run(
        self,
        message: str,
        *,
        session: _Session | None = None,
        on_event: Callable[[Event], None] | None = None,
    ) -> ChildRun:
        """Run ``message`` in ``session`` (``Agent.run``)."""

    def end_session(self, session: _Session) -> None:
        """Tell the plugins the session ended."""


class CrewRunner(Generic[_Session]):
    """Runs the children of one parent session (a ``neta.SubAgentRunner``).

    A child is a new session of the same agent with entry ``crew`` and depth one more than its
    parent's; it shares the workspace (and the memory store) and has its own history and todo
    list. It gets the toolsets it asks for (default: ``CHILD_TOOLSETS``) that the parent has,
    plus every toolset that requires the ``crew_parent`` capability (the child-only ones). Its
    events reach the parent's run tagged with ``agent_id`` = the child's id and re-addressed to
    the parent's session, so hosts show them in the conversation the user watches. Its run is
    a run inside the parent's (``neta.runtime.run_scope``): what its model calls cost counts on
    the parent's ``meter`` as it is spent, however it ends, and the parent's usage limits hold
    for it too.

    Args:
        agent: the agent that builds and runs the children.
        concurrency: how many children of this parent run at once; more wait for a slot.
        timeout: default seconds a child may take, waiting for a slot included.
    """

    def __init__(self, agent: CrewAgent[_Session], *, concurrency: int, timeout: float) -> None:
        if concurrency < 1 or timeout <= 0:
            raise ConfigError(
                f"crew concurrency must be at least 1 and the timeout positive "
                f"(got {concurrency} and {timeout:g})"
            )
        self.agent = agent
        self.parent: _Session | None = None
        self.concurrency = concurrency
        self._timeout = float(timeout)
        # a semaphore belongs to the loop it first waited in: one per loop, so that a parent
        # run again under a new loop (asyncio.run per message) still gets its slots
        self._slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    @property
    def timeout(self) -> float:
        """Default seconds a child may take before it is stopped with status ``timed_out``."""
        return self._timeout

    def bind(self, parent: _Session) -> None:
        """Attach the runner to its parent session (once that session exists)."""
        self.parent = parent

    def child_toolsets(self, requested: Sequence[str] | None = None) -> tuple[str, ...]:
        """The preset a child gets: what it asks for that the parent has, and the child-only."""
        have = set(self._parent().toolsets.enabled)
        wanted = CHILD_TOOLSETS if requested is None else requested
        shared = [name for name in dict.fromkeys(wanted) if name in have]
        return (*shared, *self._child_only())

    async def run_child(
        self,
        goal: str,
        context: str = "",
        toolsets: Sequence[str] | None = None,
        *,
        timeout: float | None = None,
        deadline: float | None = None,
    ) -> ChildResult:
        """Run one child on ``goal`` and report how it ended (see ``neta.SubAgentRunner``)."""
        parent = self._parent()
        loop = asyncio.get_running_loop()
        if deadline is None:
            limit = self._timeout if timeout is None else timeout
            deadline = loop.time() + limit
        else:
            limit = max(0.0, deadline - loop.time())
        preset = self.child_toolsets(toolsets)
        child = _Child(parent, preset, toolsets, deadline, limit, child_only=self._child_only())
        session: _Session | None = None
        try:
            async with child.stop, self._slots_in(loop):
                session = child.session = self._new_child(parent, child.id, child.preset)
                result = await self.agent.run(
                    _task_message(goal, context), session=session, on_event=child.forward
                )
        except Exception as exc:
            if isinstance(exc, TimeoutError) and child.stop.expired():
                return child.timed_out(self.concurrency)
            return child.failed(exc)
        finally:
            if session is not None:
                self.agent.end_session(session)
        return child.report(history=result.messages, **_judge(result, child.id))

    def _parent(self) -> _Session:
        if self.parent is None:
            raise ConfigError("this crew runner is not bound to a parent session")
        return self.parent

    def _slots_in(self, loop: asyncio.AbstractEventLoop) -> asyncio.Semaphore:
        if self._slots is None or self._slots[0] is not loop:
            self._slots = (loop, asyncio.Semaphore(self.concurrency))
        return self._slots[1]

    def _child_only(self) -> list[str]:
        return [s.name for s in self.agent.pm.toolset_specs() if s.requires == CREW_PARENT]

    def _new_child(self, parent: _Session, child_id: str, preset: Sequence[str]) -> _Session:
        return self.agent.new_session(
            session_id=child_id,
            entry="crew",
            toolsets=preset,
            provider=parent.provider,
            depth=parent.context.depth + 1,
            memory_store=parent.context.memory_store,
            extras={**parent.context.extras, CREW_PARENT: parent.session_id},
            # the child is held to its parent's rules, and its approvals go to the parent's
            # user (the request names the child)
            permissions=parent.context.permissions,
            approve=_parents_asker(parent),
            clarify_timeout=parent.context.clarify_timeout,
        )


def _parents_asker(parent: CrewSession) -> ApproveFn | None:
    """The parent's way of asking its user, one question at a time across its children."""
    context = parent.context
    asker = context.approve
    if asker is None and context.clarify is not None:
        asker = approve_by_clarify(context.clarify)
    if asker is None:
        return None
    ask = asker

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        async with parent._asking:
            return await ask(request)

    return approve


class _Child:
    """One child while its runner drives it: its time limit, session, events and report.

    Its events reach the parent's run re-addressed to the parent's session. It notes whether
    the child's own run is open (started, not finished), so that a run that raised is still
    announced as finished to the hosts watching it, and says why a run stopped at its time
    limit ended (the loop only knows it was cancelled).
    """

    def __init__(
        self,
        parent: CrewSession,
        preset: Sequence[str],
        requested: Sequence[str] | None,
        deadline: float,
        limit: float,
        *,
        child_only: Sequence[str],
    ) -> None:
        self.id = uuid.uuid4().hex
        self.parent = parent
        self.preset = tuple(preset)
        self.requested = tuple(dict.fromkeys(requested or ()))
        self.child_only = frozenset(child_only)
        self.started = time.monotonic()
        self.limit = _seconds(limit)
        self.stop = asyncio.timeout_at(deadline)
        self.session: CrewSession | None = None
        self.run_open = False

    @property
    def stopped_reason(self) -> str:
        """Why a child stopped at its time limit ended."""
        return f"the sub-agent did not finish within {self.limit} s and was stopped"

    def forward(self, event: Event) -> None:
        """The child's ``on_event``: pass ``event`` on to the parent's run."""
        if isinstance(event, BaseModel):
            # tool-emitted events (todo_update...) carry no agent id yet; a grandchild's do
            agent_id = getattr(event, "agent_id", None) or self.id
            update: dict[str, Any] = {"session_id": self.parent.session_id, "agent_id": agent_id}
            if agent_id == self.id and isinstance(event, RunStarted | RunFinished):
                self.run_open = isinstance(event, RunStarted)
                stopped = isinstance(event, RunFinished) and event.outcome == "cancelled"
                if stopped and self.stop.expired():
                    update["reason"] = self.stopped_reason
            event = event.model_copy(update=update)
        self.parent.dispatch(event)

    def report(
        self, status: ChildStatus, history: Sequence[Message] | None = None, **fields: Any
    ) -> ChildResult:
        """The ``ChildResult``: ``fields`` plus what the runner knows (time, tools, toolsets)."""
        given = self.session.toolsets.enabled if self.session is not None else self.preset
        if history is None:
            history = self.session.history if self.session is not None else []
        return ChildResult(
            child_id=self.id,
            status=status,
            duration_s=round(time.monotonic() - self.started, 3),
            toolsets=tuple(name for name in given if name not in self.child_only),
            tool_calls=tuple(
                c.name for m in history if m.role == "assistant" for c in m.tool_calls
            ),
            toolsets_not_given=tuple(name for name in self.requested if name not in given),
            **fields,
        )

    def timed_out(self, concurrency: int) -> ChildResult:
        """The report of a child stopped at its time limit, or never started before it."""
        if self.session is None:
            reason = (
                f"the sub-agent never started: it waited for a free slot ({concurrency} at a "
                f"time) until the time limit of {self.limit} s"
            )
            return self.report("timed_out", reason=reason)
        words = _last_words(self.session.history)
        return self.report("timed_out", summary=words, reason=self.stopped_reason)

    def failed(self, exc: Exception) -> ChildResult:
        """The report of a child whose run raised; its run is announced as finished."""
        error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        reason = f"the sub-agent failed: {error}"
        if self.run_open:
            self.forward(RunFinished(outcome="error", reason=reason))
        words = _last_words(self.session.history) if self.session is not None else ""
        return self.report("failed", summary=words, reason=reason)


def _judge(result: ChildRun, child_id: str) -> dict[str, Any]:
    """A finished child run as ``ChildResult`` fields."""
    if result.outcome == "completed":
        return {"status": "completed", "summary": result.text}
    if result.outcome == "awaiting_input":
        question = next(
            (
                str(e.data[ESCALATED_KEY])
                for e in reversed(result.events)
                # the child's own; a grandchild's reached it as a delegate result
                if isinstance(e, ToolResultEvent)
                and e.agent_id == child_id
                and ESCALATED_KEY in e.data
            ),
            result.text,  # another tool ended the turn: still a question for the parent
        )
        return {
            "status": "escalated",
            "question": question,
            "summary": _last_words(result.messages),
        }
    status = _STATUS_OF.get(result.outcome, "failed")
    return {"status": status, "summary": _last_words(result.messages), "reason": result.reason}


def _last_words(history: Sequence[Message]) -> str:
    """The child's latest non-empty reply text (its progress so far, when it stopped early)."""
    return next((m.content for m in reversed(history) if m.role == "assistant" and m.content), "")


def _seconds(value: float) -> str:
    """Seconds for a reason text: ``600``, ``0.3``, not ``599.999871``."""
    return f"{round(value, 1):g}" if value >= 1 else f"{value:.2g}"


def _task_message(goal: str, context: str) -> str:
    parts = [f"Your task: {goal.strip()}"]
    if context.strip():
        parts.append(f"Context from the delegating agent:\n{context.strip()}")
    parts.append(_SUB_AGENT_NOTE)
    return "\n\n".join(parts)
