"""``RunScope``: what a run imposes on itself and on the runs started inside it.

A run started while another runs, in that run's task (a crew child, inside its parent's tool
call), is that run's sub-agent: what it spends counts toward the outer run as it is spent (its
session's meter reports to the outer session's), the outer run's usage limits hold for it
too, and a stream reading the outer run paces it as well. The scope of the run in progress is
found through a context variable, which tasks inherit, so no caller has to pass it down.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from neta.runtime.attempt import Checkpoint
from neta.runtime.metering import Meter
from neta.runtime.usage_limits import Budget, Crossing, LimitCheck, UsageLimits

Pace = Callable[[], Awaitable[None]]
"""Awaited by a run at its checkpoints: returns once the reader of its events has room."""

_current: contextvars.ContextVar[RunScope | None] = contextvars.ContextVar(
    "neta_run_scope", default=None
)


@dataclass
class RunScope:
    """One run's budgets and pace, and the scope of the run it was started in (``outer``).

    ``meter`` is the run's session's (``None`` for a stream's scope, which only paces the run
    inside it).
    """

    meter: Meter | None
    budgets: tuple[Budget, ...] = ()
    pace: Pace | None = None
    outer: RunScope | None = None
    started: float = field(default_factory=time.monotonic)
    active: bool = field(default=True, repr=False)

    def _chain(self) -> Iterator[RunScope]:
        scope: RunScope | None = self
        while scope is not None:
            if scope.active:  # a task a run left behind may still see it
                yield scope
            scope = scope.outer

    def limit_check(self) -> LimitCheck | None:
        """What checks every budget this run is held to, or ``None`` when there is none."""
        chain = list(self._chain())
        if not any(scope.budgets for scope in chain):
            return None

        def check(asking: bool) -> Crossing | None:
            for scope in chain:
                if not scope.active:
                    continue
                for budget in scope.budgets:
                    crossing = budget.crossing(asking=asking)
                    if crossing is not None:
                        if scope is not self:
                            reason = (
                                f"the delegating agent's {crossing.reason.removeprefix('the ')}"
                            )
                            return Crossing(crossing.limit, reason)
                        return crossing
            return None

        return check

    def paced(self, checkpoint: Checkpoint | None) -> Checkpoint | None:
        """``checkpoint``, then a wait until the readers of this run's events have room.

        The readers are its stream's and those of the runs around it; without any, this is
        just ``checkpoint``.
        """
        paces = [scope.pace for scope in self._chain() if scope.pace is not None]
        if not paces:
            return checkpoint

        async def paced() -> None:
            if checkpoint is not None:
                await checkpoint()
            for pace in paces:
                await pace()

        return paced


def outer_scope() -> RunScope | None:
    """The scope of the run this code runs inside, if any."""
    scope = _current.get()
    return scope if scope is not None and scope.active else None


def run_scope(
    meter: Meter, baseline: Meter, limits: UsageLimits | None, session_limits: UsageLimits | None
) -> RunScope:
    """The scope of a run, inside the current run if there is one.

    ``meter`` is the run's session's (``baseline``: as the run began); the run is held to
    ``limits``, its session to ``session_limits``.
    """
    now = time.monotonic()
    budgets = []
    if limits is not None:
        budgets.append(Budget(limits, "the run", meter, baseline, now))
    if session_limits is not None:
        budgets.append(Budget(session_limits, "the session", meter, Meter(), now - meter.seconds))
    return RunScope(meter, tuple(budgets), outer=outer_scope(), started=now)


@contextmanager
def entered(scope: RunScope) -> Iterator[RunScope]:
    """Make ``scope`` the current one until the block ends.

    Meanwhile a sub-agent's meter reports to the outer run's; at the end, the run's time is
    added to its meter's ``seconds``.
    """
    meter = scope.meter
    around = scope.outer._chain() if scope.outer is not None else iter(())
    outer = next((s.meter for s in around if s.meter is not None), None)  # past a stream's
    linked = meter is not None and outer is not None and meter.parent is None and outer is not meter
    if linked:
        assert meter is not None
        meter.parent = outer
    token = _current.set(scope)
    try:
        yield scope
    finally:
        scope.active = False
        _current.reset(token)
        if meter is not None:
            meter.seconds += time.monotonic() - scope.started
            if linked:
                meter.parent = None
