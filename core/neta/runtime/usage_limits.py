"""``UsageLimits``: what a run, or a session over all its runs, may spend before it stops.

Limits are checked before each model call and before a reply's tool calls run: once what was
spent has gone past one (for ``model_calls``: once the next call would), the run ends there
with outcome ``limit``, its reason naming the limit. What a sub-agent spends counts toward the
run that delegated to it (and that run's session) as it is spent, so a child stops too when its
parent's budget is used up.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, fields

from neta.errors import ConfigError
from neta.runtime.metering import Meter


@dataclass(frozen=True)
class UsageLimits:
    """Caps on what a run (or a session, over all its runs) may spend; ``None``: no cap.

    Checked before each model call and before a reply's tool calls run: a run that would make
    more than ``model_calls`` calls, or whose spending has gone past another cap, stops there
    with outcome ``limit`` (``RunResult.limit`` names the cap); a reply's calls that would take
    it past ``tool_calls`` do not run. The model reply that crosses a token cap is not undone,
    so a run may end somewhat past it; what is under way (a reply, a tool) finishes first.
    Sub-agents' spending counts toward the run that delegated to them, and stops them too
    when that run's budget is used up.

    ``Agent(usage_limits=...)`` holds every run to them (``Agent.run(usage_limits=...)``
    replaces them for one run); ``Agent.new_session(usage_limits=...)`` holds a session to
    them over all its runs.

    Attributes:
        input_tokens: input tokens, prompt-cache reads and writes included.
        output_tokens: tokens the model generated.
        total_tokens: input plus output tokens.
        model_calls: model requests answered.
        tool_calls: tool calls the model made.
        wall_time: seconds a run has been running (for a session: its runs' time added up).
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    model_calls: int | None = None
    tool_calls: int | None = None
    wall_time: float | None = None

    def __post_init__(self) -> None:
        for limit in fields(self):
            value = getattr(self, limit.name)
            if value is not None and value < 0:
                raise ConfigError(f"usage limit {limit.name} must not be below 0, not {value}")

    def _passed(self, spent: dict[str, float], *, asking: bool) -> tuple[str, float] | None:
        """The first cap ``spent`` (by cap name) went past, and the cap.

        ``asking``: a model call is about to be made, so reaching ``model_calls`` is enough.
        """
        for name, used in spent.items():
            cap = getattr(self, name)
            if cap is not None and (
                used > cap or (asking and name == "model_calls" and used >= cap)
            ):
                return name, cap
        return None


@dataclass(frozen=True)
class Crossing:
    """A usage limit a run reached: its name (``total_tokens``) and the reason, in words."""

    limit: str
    reason: str


LimitCheck = Callable[[bool], Crossing | None]
"""The usage limit a run has crossed, if any; called with ``True`` before a model call (one is
about to be made), ``False`` before a reply's tool calls run."""


@dataclass(frozen=True)
class Budget:
    """``limits`` held against what ``meter`` counted since ``baseline``.

    Time counts since ``started`` (``time.monotonic``); ``whose`` names the limits' owner in
    the reason (``the run``).
    """

    limits: UsageLimits
    whose: str
    meter: Meter
    baseline: Meter
    started: float

    def crossing(self, *, asking: bool) -> Crossing | None:
        """The limit crossed, if any (``asking``: before a model call)."""
        now, then = _counts(self.meter), _counts(self.baseline)
        tokens_in, tokens_out, calls, tool_calls = (a - b for a, b in zip(now, then, strict=True))
        spent: dict[str, float] = {
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
            "model_calls": calls,
            "tool_calls": tool_calls,
            "wall_time": time.monotonic() - self.started,
        }
        found = self.limits._passed(spent, asking=asking)
        if found is None:
            return None
        name, cap = found
        used = spent[name]
        if name == "wall_time":
            said = f"{cap:g} s; {used:.1f} s spent"
        else:
            said = f"{cap:,.0f}; {used:,.0f} spent"
        return Crossing(name, f"{self.whose} reached its usage limit {name} ({said})")


def _counts(meter: Meter) -> tuple[int, int, int, int]:
    """Input and output tokens, model calls and tool calls: its own and its sub-agents'."""
    return (
        meter.usage.input_tokens + meter.sub_agent_usage.input_tokens,
        meter.usage.output_tokens + meter.sub_agent_usage.output_tokens,
        meter.calls + meter.sub_agent_calls,
        meter.tool_calls + meter.sub_agent_tool_calls,
    )
