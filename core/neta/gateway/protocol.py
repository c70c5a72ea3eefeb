"""The frames clients send over the WebSocket, and how they are read.

Every frame is a JSON object ``{"type": ..., "sessionId": ..., "data": {...}}``; clients may
also put the fields of ``data`` at the top level. Text frames are expected; a binary frame is
read as UTF-8 text. Client frames:

- ``user_message {text}``: run the agent on ``text``;
- ``clarify_response {requestId, answer}``: answer a pending question;
- ``cancel_run {}``: cancel the session's run;
- ``ping {}``: the server answers ``pong``.

The server sends ``session_ready {sessionId, pendingClarify}``, the runtime events
(``run_started``, ``text_delta``, ``tool_call_start``, ``tool_result``, ``todo_update``,
``run_finished``), ``clarify_request {requestId, question, choices}``,
``clarify_resolved {requestId, outcome}``, ``pong`` and ``error {code, message}``. Error codes:
``frame_too_large``, ``invalid_json``, ``unknown_type``, ``invalid_frame``, ``forbidden``,
``busy``, ``not_running``, ``unknown_request``, ``already_resolved``, ``expired``,
``invalid_answer``, ``unknown_session``, ``session_deleted``, ``internal``.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from neta.hosting.inputs import AnswerText, UserText


class _Frame(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    session_id: str | None = Field(default=None, alias="sessionId")


class UserMessage(_Frame):
    """Run the agent on ``text``."""

    type: Literal["user_message"]
    text: UserText


class ClarifyResponse(_Frame):
    """Answer the pending question ``request_id``."""

    type: Literal["clarify_response"]
    request_id: str = Field(alias="requestId", min_length=1)
    answer: AnswerText


class CancelRun(_Frame):
    """Cancel the session's run."""

    type: Literal["cancel_run"]


class Ping(_Frame):
    """Check the connection; answered with ``pong``."""

    type: Literal["ping"]


ClientFrame = Annotated[
    UserMessage | ClarifyResponse | CancelRun | Ping, Field(discriminator="type")
]
_CLIENT_FRAME: TypeAdapter[ClientFrame] = TypeAdapter(ClientFrame)


class BadFrame(Exception):
    """A frame that cannot be read; ``code`` and the message go back as an ``error`` frame."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def parse_frame(payload: str | bytes, max_bytes: int) -> ClientFrame:
    """Read one client frame (a binary frame must hold UTF-8 JSON text).

    Raises:
        BadFrame: ``frame_too_large``, ``invalid_json``, ``unknown_type`` or ``invalid_frame``.
    """
    if isinstance(payload, bytes):
        size = len(payload)
    else:
        size = len(payload.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise BadFrame(
            "frame_too_large", f"frame of {size} bytes exceeds the {max_bytes}-byte limit"
        )
    try:
        text = payload.decode("utf-8") if isinstance(payload, bytes) else payload
        raw: Any = json.loads(text)
    except UnicodeDecodeError:
        raise BadFrame("invalid_json", "binary frame is not UTF-8 text") from None
    except ValueError as exc:
        raise BadFrame("invalid_json", f"frame is not valid JSON: {exc}") from None
    except RecursionError:
        raise BadFrame("invalid_json", "frame is nested too deeply") from None
    if not isinstance(raw, dict):
        raise BadFrame("invalid_frame", "a frame must be a JSON object")
    data = raw.get("data")
    merged = {**data, **raw} if isinstance(data, dict) else raw
    kind = merged.get("type")
    if kind not in ("user_message", "clarify_response", "cancel_run", "ping"):
        raise BadFrame("unknown_type", f"unknown frame type {repr(kind)[:80]}")
    try:
        return _CLIENT_FRAME.validate_python(merged)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"][1:]) or "frame"
        raise BadFrame("invalid_frame", f"{kind}: {where}: {first['msg']}") from None
