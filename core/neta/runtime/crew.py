"""``CrewRunner``: a parent session's children, built by the same agent and the same plugins."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from neta.crew import CREW_PARENT, ESCALATED_KEY, ChildResult, ChildStatus
from neta.errors import ConfigError
from neta.events import ToolResultEvent
from neta.messages import Message
from neta.toolsets import TOOLSET_DEFAULTS

if TYPE_CHECKING:
    from neta.runtime.agent import Agent, AgentSession, RunResult

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


class CrewRunner:
    """Runs the children of one parent session (a ``neta.SubAgentRunner``).

    A child is a new session of the same agent with entry ``crew`` and depth one more than its
    parent's; it shares the workspace (and the memory store) and has its own history and todo
    list. It gets the toolsets it asks for (default: ``CHILD_TOOLSETS``) that the parent has,
    plus every toolset that requires the ``crew_parent`` capability (the child-only ones). Its
    events reach the parent's run tagged with ``agent_id`` = the child's id and re-addressed to
    the parent's session, so hosts show them in the conversation the user watches.

    Args:
        agent: the agent that builds and runs the children.
        concurrency: how many children of this parent run at once; more wait for a slot.
        timeout: default seconds a child may take, waiting for a slot included.
    """

    def __init__(self, agent: Agent, *, concurrency: int, timeout: float) -> None:
        if concurrency < 1 or timeout <= 0:
            raise ConfigError(
                f"crew concurrency must be at least 1 and the timeout positive "
                f"(got {concurrency} and {timeout:g})"
            )
        self.agent = agent
        self.parent: AgentSession | None = None
        self._timeout = float(timeout)
        self._slots = asyncio.Semaphore(concurrency)

    @property
    def timeout(self) -> float:
        """Default seconds a child may take before it is stopped with status ``timed_out``."""
        return self._timeout

    def bind(self, parent: AgentSession) -> None:
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
        child_id = uuid.uuid4().hex
        preset = self.child_toolsets(toolsets)
        started = time.monotonic()
        children: list[AgentSession] = []

        def report(status: ChildStatus, **fields: Any) -> ChildResult:
            given = children[0].toolsets.enabled if children else preset
            child_only = set(self._child_only())
            return ChildResult(
                child_id=child_id,
                status=status,
                duration_s=round(time.monotonic() - started, 3),
                toolsets=tuple(name for name in given if name not in child_only),
                **fields,
            )

        limit = self._timeout if timeout is None else timeout
        if deadline is not None:
            limit = max(0.0, deadline - asyncio.get_running_loop().time())
        stop = asyncio.timeout_at(deadline) if deadline is not None else asyncio.timeout(limit)
        try:
            async with stop, self._slots:
                child = self._new_child(parent, child_id, preset)
                children.append(child)
                result = await self.agent.run(
                    _task_message(goal, context),
                    session=child,
                    on_event=self._forwarder(parent, child_id),
                )
        except TimeoutError:
            if not stop.expired():
                return report("failed", reason="the sub-agent failed: TimeoutError")
            reason = f"the sub-agent did not finish within {limit:g} s and was stopped"
            words = _last_words(children[0].history) if children else ""
            return report("timed_out", summary=words, reason=reason)
        except Exception as exc:
            return report("failed", reason=f"the sub-agent failed: {type(exc).__name__}: {exc}")
        finally:
            for child in children:
                self.agent.end_session(child)
        return report(**_judge(result))

    def _parent(self) -> AgentSession:
        if self.parent is None:
            raise ConfigError("this crew runner is not bound to a parent session")
        return self.parent

    def _child_only(self) -> list[str]:
        return [s.name for s in self.agent.pm.toolset_specs() if s.requires == CREW_PARENT]

    def _new_child(
        self, parent: AgentSession, child_id: str, preset: Sequence[str]
    ) -> AgentSession:
        return self.agent.new_session(
            session_id=child_id,
            entry="crew",
            toolsets=preset,
            provider=parent.provider,
            depth=parent.context.depth + 1,
            memory_store=parent.context.memory_store,
            extras={**parent.context.extras, CREW_PARENT: parent.session_id},
        )

    @staticmethod
    def _forwarder(parent: AgentSession, child_id: str) -> Callable[[Any], None]:
        def forward(event: Any) -> None:
            if isinstance(event, BaseModel):
                # tool-emitted events (todo_update...) carry no agent id yet; a grandchild's do
                agent_id = getattr(event, "agent_id", None) or child_id
                event = event.model_copy(
                    update={"session_id": parent.session_id, "agent_id": agent_id}
                )
            parent.dispatch(event)

        return forward


def _judge(result: RunResult) -> dict[str, Any]:
    """A finished child run as ``ChildResult`` fields."""
    if result.outcome == "completed":
        return {"status": "completed", "summary": result.text}
    if result.outcome == "awaiting_input":
        question = next(
            (
                str(e.data[ESCALATED_KEY])
                for e in reversed(result.events)
                if isinstance(e, ToolResultEvent) and ESCALATED_KEY in e.data
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


def _task_message(goal: str, context: str) -> str:
    parts = [f"Your task: {goal.strip()}"]
    if context.strip():
        parts.append(f"Context from the delegating agent:\n{context.strip()}")
    parts.append(_SUB_AGENT_NOTE)
    return "\n\n".join(parts)
