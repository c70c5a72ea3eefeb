"""How a sub-agent's result reads for the model that delegated the task, and for hosts."""

from __future__ import annotations

import dataclasses
from typing import Any

import neta

_SUCCEEDED = frozenset({"completed", "escalated"})


def succeeded(result: neta.ChildResult) -> bool:
    """Whether the child finished or asked a question (rather than failing or being stopped)."""
    return result.status in _SUCCEEDED


def describe(result: neta.ChildResult) -> str:
    """The result as text: status, child, duration and toolsets, then summary or question."""
    facts = [f"{result.duration_s:.1f} s"]
    if result.child_id:
        facts.insert(0, f"sub-agent {result.child_id[:8]}")
    if result.toolsets:
        facts.append("toolsets: " + ", ".join(result.toolsets))
    lines = [f"Status: {result.status} ({'; '.join(facts)})"]
    if result.status == "completed":
        lines += ["Summary:", result.summary.strip() or "(the sub-agent gave no final text)"]
        return "\n".join(lines)
    if result.status == "escalated":
        lines += [
            f"The sub-agent stopped to ask: {result.question.strip()}",
            "It did not finish its task. Decide: answer from what you know and delegate again "
            "with the answer in the context, or ask the user if you can.",
        ]
    elif result.reason:
        lines.append(f"Reason: {result.reason}")
    if result.summary.strip():
        lines += ["Its last words before it stopped:", result.summary.strip()]
    return "\n".join(lines)


def as_data(result: neta.ChildResult) -> dict[str, Any]:
    """The result as plain data, for a tool result's ``data`` (hosts read it; the model not)."""
    data = dataclasses.asdict(result)
    data["toolsets"] = list(result.toolsets)
    return data
