"""Sub-agents as tools see them: the runner a top-level session carries, and what a child returns.

The runtime gives a session a runner (``SessionContext.crew_runner``) while its depth allows
children; the ``crew`` toolset's tools call it. A child is a session of its own (history, todo
list) in the parent's workspace. It carries the ``crew_parent`` capability, so toolsets that
require it (the child-only ones, such as the one holding ``escalate``) are given to children
and to nobody else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

__all__ = ["CREW_PARENT", "ESCALATED_KEY", "ChildResult", "ChildStatus", "SubAgentRunner"]

CREW_PARENT = "crew_parent"
"""The capability (an ``extras`` key, holding the parent's session id) every crew child has."""

ESCALATED_KEY = "escalated"
"""The ``ToolResult.data`` key with which a child's tool hands its question up to the parent."""

ChildStatus = Literal["completed", "failed", "escalated", "timed_out", "cancelled", "max_turns"]
"""How a child ended: it answered, broke, asked its parent, ran out of time or turns, or stopped."""


@dataclass(frozen=True)
class ChildResult:
    """What one child run produced, for the parent to read and decide on.

    Attributes:
        child_id: the child's session id (also the ``agent_id`` of the events it emitted).
        status: how it ended.
        summary: its final reply; for a child that stopped early, its last words so far.
        question: what it asked, when ``status`` is ``escalated``.
        duration_s: seconds from the request to the result, waiting for a free slot included.
        reason: why it did not complete, in words (empty when it did).
        toolsets: the toolsets the child was given.
        tool_calls: the names of the tools it called, in order (what it may have changed,
            when it stopped before it could say).
        toolsets_not_given: toolsets asked for by name that it did not get (unknown, not the
            parent's, or never given to a child).
    """

    child_id: str
    status: ChildStatus
    summary: str = ""
    question: str = ""
    duration_s: float = 0.0
    reason: str = ""
    toolsets: tuple[str, ...] = ()
    tool_calls: tuple[str, ...] = ()
    toolsets_not_given: tuple[str, ...] = ()


@runtime_checkable
class SubAgentRunner(Protocol):
    """Runs child agents for one parent session (what ``SessionContext.crew_runner`` holds)."""

    @property
    def timeout(self) -> float:
        """Seconds a child may take before it is stopped with status ``timed_out``."""
        ...

    async def run_child(
        self,
        goal: str,
        context: str = "",
        toolsets: Sequence[str] | None = None,
        *,
        timeout: float | None = None,
        deadline: float | None = None,
    ) -> ChildResult:
        """Run one child on ``goal`` until it answers, and report how it ended.

        A failing child is reported (status ``failed``), never raised. Cancelling the caller
        cancels the child.

        Args:
            goal: what the child must achieve.
            context: everything else the child needs; it sees nothing of the parent's
                conversation.
            toolsets: the toolsets it asks for (``None``: the runner's defaults); only those
                the parent has are given.
            timeout: seconds, counted from this call, waiting for a free slot included
                (``None``: ``self.timeout``).
            deadline: an event-loop time (``loop.time()``) to stop at instead of
                ``timeout``; children sharing one deadline stop together, so a child still
                waiting for a slot never starts once that time has come.
        """
        ...
