"""``Meter``: the model calls a session made and the tokens they cost, its sub-agents' apart.

Each answer is counted as it arrives, so what a run cancelled halfway spent is known too. A
sub-agent's meter has its parent's as ``parent``: each of its answers is counted there as well,
as it arrives (and in the grandparent's), so a budget sees what children spend while they run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from neta.messages import Usage
from neta.providers.base import ModelRequest, ModelResponse, Provider, TextSink


@dataclass
class Meter:
    """What a session's model calls cost, over all its runs.

    Attributes:
        calls: model requests the session's own runs made that were answered.
        usage: the tokens those answers reported.
        tool_calls: the tool calls those answers made.
        sub_agent_calls: model requests its sub-agents made (theirs too, at any depth).
        sub_agent_usage: the tokens those reported.
        sub_agent_tool_calls: the tool calls those made.
        seconds: how long the session's runs took, added up (a run's when it ends).
        parent: the meter of the session that delegated to this one, which counts this one's
            answers as its sub-agents' (``None`` for a session of its own).
    """

    calls: int = 0
    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0
    sub_agent_calls: int = 0
    sub_agent_usage: Usage = field(default_factory=Usage)
    sub_agent_tool_calls: int = 0
    seconds: float = 0.0
    parent: Meter | None = field(default=None, repr=False, compare=False)

    def count(self, response: ModelResponse) -> None:
        """Count one answer of the session's own (and, as a sub-agent's, in its ancestors)."""
        self.calls += 1
        self.tool_calls += len(response.tool_calls)
        if response.usage is not None:
            self.usage = self.usage + response.usage
        ancestor = self.parent
        while ancestor is not None:
            ancestor.sub_agent_calls += 1
            ancestor.sub_agent_tool_calls += len(response.tool_calls)
            if response.usage is not None:
                ancestor.sub_agent_usage = ancestor.sub_agent_usage + response.usage
            ancestor = ancestor.parent

    def snapshot(self) -> Meter:
        """A copy as it stands now (``since`` it, what happened afterwards)."""
        return Meter(
            self.calls,
            self.usage,
            self.tool_calls,
            self.sub_agent_calls,
            self.sub_agent_usage,
            self.sub_agent_tool_calls,
            self.seconds,
        )

    def since(self, earlier: Meter) -> Meter:
        """What was counted after ``earlier`` (a ``snapshot`` of this meter)."""
        return Meter(
            calls=self.calls - earlier.calls,
            usage=_minus(self.usage, earlier.usage),
            tool_calls=self.tool_calls - earlier.tool_calls,
            sub_agent_calls=self.sub_agent_calls - earlier.sub_agent_calls,
            sub_agent_usage=_minus(self.sub_agent_usage, earlier.sub_agent_usage),
            sub_agent_tool_calls=self.sub_agent_tool_calls - earlier.sub_agent_tool_calls,
            seconds=self.seconds - earlier.seconds,
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
