"""``RunResult``: what one ``Agent.run`` produced."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic

from typing_extensions import TypeVar

from neta.events import Event, Outcome
from neta.messages import Message, Usage
from neta.permissions import ApprovalRequest, Denial

OutputT = TypeVar("OutputT", default=object)
"""The type of a run's typed answer (``Agent.run(output_type=...)``)."""


@dataclass(frozen=True)
class RunResult(Generic[OutputT]):
    """What one ``Agent.run`` produced.

    Attributes:
        text: the final reply (the question, when ``outcome`` is ``awaiting_input``; the
            answer's JSON for a run with an ``output_type``).
        outcome: how the run ended.
        reason: why, in words, when it did not simply complete.
        messages: the session's whole history after the run.
        events: every event the run emitted, in order.
        usage: tokens summed over the run's own turns (its sub-agents' are apart:
            ``sub_agent_usage``; both together: ``total_usage``).
        turns: how many times the model was asked.
        session_id: the session the run belonged to.
        denials: the tool calls that were denied and did not run (by a rule, the mode, a
            person, or for want of anyone to ask).
        approvals: the calls waiting for the next message to approve them (``outcome`` is
            ``awaiting_input``); answer with ``Agent.run(..., approvals={request_id: ...})``.
        sub_agent_calls: model requests the run's sub-agents (crew children, theirs too) made
            and were answered.
        sub_agent_usage: the tokens those requests reported.
        output: the validated answer of a run with an ``output_type`` that completed (an
            instance of it; the checked dict for a JSON Schema); ``None`` otherwise.
        limit: the usage limit that ended the run (``total_tokens``, ``wall_time``...) when
            ``outcome`` is ``limit``; empty otherwise.
    """

    text: str
    outcome: Outcome
    reason: str
    messages: list[Message]
    events: list[Event]
    usage: Usage
    turns: int
    session_id: str
    denials: list[Denial] = field(default_factory=list)
    approvals: list[ApprovalRequest] = field(default_factory=list)
    sub_agent_calls: int = 0
    sub_agent_usage: Usage = field(default_factory=Usage)
    output: OutputT | None = None
    limit: str = ""

    @property
    def total_usage(self) -> Usage:
        """Every token the run cost: its own turns' and its sub-agents'."""
        return self.usage + self.sub_agent_usage
