"""The answer to a REST message (``MessageOut``): read from its run's result, or its frames.

A run on this worker ends with a ``RunResult``; a run on another worker (several workers) is
known here only by the frames it published on the bus, and the reply is read from those.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from neta.hosting.cluster.bus import Frame
from neta.hosting.protocol import MessageOut, approval_json, denial_json
from neta.runtime.agent import RunResult

_NOT_EVENTS = {"clarify_resolved", "approval_resolved", "error", "pong", "session_ready"}


def reply_of_run(run: asyncio.Task[RunResult], todos: list[dict[str, Any]]) -> MessageOut:
    """The reply of a run that ended here (``run`` is done)."""
    if run.cancelled():  # cancelled before it began
        return MessageOut(
            reply="", outcome="cancelled", reason="the run was cancelled", events=[], todos=todos
        )
    result = run.result()
    return MessageOut(
        reply=result.text,
        outcome=result.outcome,
        reason=result.reason,
        events=[e.model_dump(mode="json") for e in result.events],
        todos=todos,
        approvals=[approval_json(r.public(), r.request_id) for r in result.approvals],
        denials=[denial_json(d) for d in result.denials],
    )


def reply_of_frames(
    session_id: str, frames: list[Frame], todos: list[dict[str, Any]]
) -> MessageOut:
    """The reply of a run on another worker, read from its frames (to its ``run_finished``)."""
    events = [
        {"type": f["type"], "session_id": session_id, **f.get("data", {})}
        for f in frames
        if f.get("type") not in _NOT_EVENTS
    ]
    finished = events[-1]
    return MessageOut(
        reply=str(finished.get("text", "")),
        outcome=finished["outcome"],
        reason=str(finished.get("reason", "")),
        events=events,
        todos=todos,
        approvals=_waiting(frames),
        denials=_denied(frames),
    )


def _waiting(frames: list[Frame]) -> list[dict[str, Any]]:
    """The approvals a run's frames show it left waiting: asked, and never resolved.

    (An approval asked live, of a session with a WebSocket client, is always resolved.)
    """
    resolved = {f["data"].get("requestId") for f in frames if f["type"] == "approval_resolved"}
    return [
        {k: v for k, v in f["data"].items() if k != "agent_id"}
        for f in frames
        if f["type"] == "approval_request"
        and f["data"].get("agent_id") is None
        and f["data"].get("requestId") not in resolved
    ]


def _denied(frames: list[Frame]) -> list[dict[str, Any]]:
    """The calls a run's frames show were denied (``RunResult.denials``, read from frames)."""
    arguments = {
        f["data"].get("call_id"): f["data"].get("arguments")
        for f in frames
        if f["type"] == "tool_call_start"
    }
    return [
        {
            "callId": data["call_id"],
            "tool": data["name"],
            "arguments": _decoded(arguments.get(data["call_id"])),
            "reason": data.get("reason", ""),
            "by": data.get("decided_by", ""),
        }
        for data in (f["data"] for f in frames if f["type"] == "permission_decision")
        if data.get("action") == "deny" and data.get("agent_id") is None
    ]


def _decoded(arguments: object) -> dict[str, Any]:
    """A call's arguments as the model wrote them (JSON text), decoded when they are an object."""
    try:
        value = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
