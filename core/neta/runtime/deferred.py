"""Answers to the calls a run left waiting for approval in the next message (REST).

A session that cannot ask live leaves such calls without a result and ends the run; the
next ``Agent.run(..., approvals=...)`` names them by the request id each was asked under
(``neta.messages.deferred_approval_id``) and they run, or are denied, first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from neta.errors import ConfigError
from neta.messages import Message, waiting_approvals
from neta.permissions import ApprovalAnswer, answer_from_text, offered_choices
from neta.tools import ToolCall


def resumed_calls(
    history: list[Message], approvals: Mapping[str, object] | None
) -> dict[str, ToolCall]:
    """The calls ``approvals`` answers, by request id: those the last run left waiting."""
    if not approvals:
        return {}
    waiting = waiting_approvals(history)
    unknown = sorted(set(approvals) - set(waiting))
    if unknown:
        raise ConfigError(
            f"no tool call waits for approval under id {unknown[0]!r} in this session"
            + (f" (waiting: {', '.join(waiting)})" if waiting else "")
        )
    return waiting


def answers_by_call(
    approvals: Mapping[str, ApprovalAnswer | str] | None,
    waiting: Mapping[str, ToolCall],
    workspace: Path,
) -> dict[str, ApprovalAnswer]:
    """The answers by call id; a text answer read against the choices its call offered."""
    answers = {}
    for request_id, answer in (approvals or {}).items():
        call = waiting[request_id]
        if not isinstance(answer, ApprovalAnswer):
            offered = offered_choices(call.name, _decoded(call.arguments), workspace)
            answer = answer_from_text(answer, offered)
        answers[call.id] = answer
    return answers


def _decoded(arguments: str) -> dict[str, object]:
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
