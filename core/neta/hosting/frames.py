"""The frames the server sends: ``{"type", "sessionId", "data"}`` JSON objects."""

from __future__ import annotations

from typing import Any

from neta.events import ClarifyRequest


def frame(kind: str, session_id: str, data: dict[str, Any]) -> dict[str, Any]:
    """A server-to-client frame: ``{"type", "sessionId", "data"}``."""
    return {"type": kind, "sessionId": session_id, "data": data}


def error_frame(session_id: str, code: str, message: str) -> dict[str, Any]:
    """An ``error {code, message}`` frame."""
    return frame("error", session_id, {"code": code, "message": message})


def event_frame(session_id: str, event: Any) -> dict[str, Any]:
    """A runtime event as a frame of ``session_id``, its data plain JSON values.

    A clarify request carries the fields clients answer with. A crew child's events belong to
    the session too; their ``agent_id`` tells them apart.
    """
    if isinstance(event, ClarifyRequest):
        data: dict[str, Any] = {
            "requestId": event.request_id,
            "question": event.question,
            "choices": event.choices,
        }
    else:
        data = event.model_dump(mode="json", exclude={"type", "session_id"})
    return frame(event.type, session_id, data)
