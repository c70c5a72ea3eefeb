"""``Meter``: the model calls a session made and the tokens they cost, its sub-agents' apart.

Each answer is counted as it arrives, so what a run cancelled halfway spent is known too. A
crew child's meter is added to its parent's when the child ends, grandchildren included.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from neta.messages import Usage
from neta.providers.base import ModelRequest, ModelResponse, Provider, TextSink


@dataclass
class Meter:
    """What a session's model calls cost, over all its runs.

    Attributes:
        calls: model requests the session's own runs made that were answered.
        usage: the tokens those answers reported.
        sub_agent_calls: model requests its sub-agents made (theirs too, at any depth).
        sub_agent_usage: the tokens those reported.
    """

    calls: int = 0
    usage: Usage = field(default_factory=Usage)
    sub_agent_calls: int = 0
    sub_agent_usage: Usage = field(default_factory=Usage)

    def count(self, response: ModelResponse) -> None:
        """Count one answer of the session's own."""
        self.calls += 1
        if response.usage is not None:
            self.usage = self.usage + response.usage

    def add_sub_agent(self, child: Meter) -> None:
        """Add what a sub-agent spent, its own sub-agents included."""
        self.sub_agent_calls += child.calls + child.sub_agent_calls
        self.sub_agent_usage = self.sub_agent_usage + child.usage + child.sub_agent_usage

    def snapshot(self) -> Meter:
        """A copy as it stands now (``since`` it, what happened afterwards)."""
        return dataclasses.replace(self)

    def since(self, earlier: Meter) -> Meter:
        """What was counted after ``earlier`` (a ``snapshot`` of this meter)."""
        return Meter(
            calls=self.calls - earlier.calls,
            usage=_minus(self.usage, earlier.usage),
            sub_agent_calls=self.sub_agent_calls - earlier.sub_agent_calls,
            sub_agent_usage=_minus(self.sub_agent_usage, earlier.sub_agent_usage),
        )


def _minus(later: Usage, earlier: Usage) -> Usage:
    return Usage(
        input_tokens=later.input_tokens - earlier.input_tokens,
        output_tokens=later.output_tokens - earlier.output_tokens,
        cache_read_tokens=later.cache_read_tokens - earlier.cache_read_tokens,
        cache_creation_tokens=later.cache_creation_tokens - earlier.cache_creation_tokens,
    )


class MeteredProvider:
    """A provider whose every answer is counted on ``meter``."""

    def __init__(self, provider: Provider, meter: Meter) -> None:
        self.provider = provider
        self.meter = meter

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """The wrapped provider's answer, counted."""
        response = await self.provider.complete(request, on_text)
        self.meter.count(response)
        return response
