"""How a sub-agent's result reads for the model that delegated the task, and for hosts."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from typing import Any

import neta
from neta_crew import escalate

REPLY_BUDGET = 24_000
"""Characters of sub-agents' replies one delegation shows its model, all children together.

Below the runtime's default output limit (30,000), which would otherwise cut the middle of a
parallel delegation's text and with it whole tasks. Hosts still get every reply whole in the
result's data.
"""

_MIN_SHARE = 1_000
_SUCCEEDED = frozenset({"completed", "escalated"})


def succeeded(result: neta.ChildResult) -> bool:
    """Whether the child finished or asked a question (rather than failing or being stopped)."""
    return result.status in _SUCCEEDED


def describe(result: neta.ChildResult, limit: int = REPLY_BUDGET) -> str:
    """The result as text: status, child, duration and toolsets, then summary or question.

    A summary or question longer than ``limit`` characters keeps its head and its tail.
    """
    facts = [f"{result.duration_s:.1f} s"]
    if result.child_id:
        facts.insert(0, f"sub-agent {result.child_id[:8]}")
    if result.toolsets:
        facts.append("toolsets: " + ", ".join(result.toolsets))
    lines = [f"Status: {result.status} ({'; '.join(facts)})"]
    if result.toolsets_not_given:
        lines.append(
            "Toolsets asked for but not given: "
            + ", ".join(result.toolsets_not_given)
            + " (unknown, or not available to a sub-agent)"
        )
    summary = _clip(result.summary.strip(), limit)
    if result.status == "completed":
        lines += ["Summary:", summary or "(the sub-agent gave no final text)"]
        return "\n".join(lines)
    if result.status == "escalated":
        lines += [
            f"The sub-agent stopped to ask: {_clip(result.question.strip(), limit)}",
            "It did not finish its task. Decide: answer from what you know and delegate again "
            "with the answer in the context, or ask the user if you can.",
        ]
    elif result.reason:
        lines.append(f"Reason: {result.reason}")
    called = Counter(name for name in result.tool_calls if name != escalate.SCHEMA.name)
    if called:
        listing = ", ".join(f"{name} ({n})" if n > 1 else name for name, n in called.items())
        lines.append(f"Tools it called before it stopped: {listing}")
    if summary:
        lines += ["Its last words before it stopped:", summary]
    return "\n".join(lines)


def shares(results: Sequence[neta.ChildResult], budget: int = REPLY_BUDGET) -> list[int]:
    """Each result's share of ``budget``: short replies whole, long ones split what is left."""
    sizes = [len(r.summary.strip()) + len(r.question.strip()) for r in results]
    limits = [0] * len(sizes)
    left = budget
    for rank, index in enumerate(sorted(range(len(sizes)), key=sizes.__getitem__)):
        given = min(sizes[index], left // (len(sizes) - rank))
        limits[index] = max(given, _MIN_SHARE)
        left -= given
    return limits


def as_data(result: neta.ChildResult) -> dict[str, Any]:
    """The result as plain data, for a tool result's ``data`` (hosts read it; the model not)."""
    data = dataclasses.asdict(result)
    for key in ("toolsets", "tool_calls", "toolsets_not_given"):
        data[key] = list(data[key])
    return data


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    omitted = len(text) - head - tail
    marker = f"[... {omitted} characters of the sub-agent's reply omitted ...]"
    return f"{text[:head]}\n{marker}\n{text[len(text) - tail :]}"
