"""The WebSocket endpoint: one connection attached to one session."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from neta.gateway.protocol import (
    BadFrame,
    CancelRun,
    ClarifyResponse,
    ClientFrame,
    Ping,
    UserMessage,
    parse_frame,
)
from neta.hosting.auth import token_ok
from neta.hosting.hub import Busy, LiveSession, SessionHub, UnknownSession, frame
from neta.hosting.questions import AnswerRefused

POLICY_VIOLATION = 1008


class QueueOutbox:
    """A connection's outgoing frames, in order, drained by its writer task."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def put(self, frame: dict[str, Any]) -> None:
        """Queue a frame."""
        self.queue.put_nowait(frame)


async def serve_connection(ws: WebSocket, hub: SessionHub) -> None:
    """Run one WebSocket connection until the client leaves.

    The token is checked before anything else, so a refused client creates no session state.
    ``?sessionId=`` reattaches to an existing session (its pending questions are re-sent in
    ``session_ready``); without it a new session starts.
    """
    if not token_ok(
        hub.config.token, ws.query_params.get("token"), ws.headers.get("authorization")
    ):
        await ws.close(code=POLICY_VIOLATION, reason="missing or wrong token")
        return
    wanted = ws.query_params.get("sessionId")
    try:
        live = hub.get(wanted) if wanted else hub.create("gateway")
    except UnknownSession:
        await ws.accept()
        await ws.send_text(
            json.dumps(
                frame("error", wanted or "", _error("unknown_session", f"no session {wanted!r}"))
            )
        )
        await ws.close(code=POLICY_VIOLATION)
        return
    await ws.accept()
    session_id = live.session.session_id
    outbox = QueueOutbox()
    outbox.put(
        frame(
            "session_ready",
            session_id,
            {"sessionId": session_id, "pendingClarify": hub.pending_questions(session_id)},
        )
    )
    live.outboxes.add(outbox)
    writer = asyncio.create_task(_write(ws, outbox))
    try:
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                break
            text = message.get("text")
            if text is None:
                text = (message.get("bytes") or b"").decode("utf-8", "replace")
            await _handle(text, live, hub, outbox)
    except WebSocketDisconnect:
        pass
    finally:
        live.outboxes.discard(outbox)
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await writer


async def _write(ws: WebSocket, outbox: QueueOutbox) -> None:
    while True:
        item = await outbox.queue.get()
        try:
            await ws.send_text(json.dumps(item))
        except (WebSocketDisconnect, RuntimeError, OSError):
            return


async def _handle(text: str, live: LiveSession, hub: SessionHub, outbox: QueueOutbox) -> None:
    session_id = live.session.session_id
    try:
        incoming: ClientFrame = parse_frame(text, hub.config.max_frame_bytes)
    except BadFrame as exc:
        outbox.put(frame("error", session_id, _error(exc.code, str(exc))))
        return
    if incoming.session_id not in (None, session_id):
        message = f"this connection belongs to session {session_id!r}"
        outbox.put(frame("error", session_id, _error("forbidden", message)))
        return
    if isinstance(incoming, UserMessage):
        try:
            hub.start_run(live, incoming.text)
        except Busy:
            outbox.put(frame("error", session_id, _error("busy", "a run is already in progress")))
    elif isinstance(incoming, ClarifyResponse):
        try:
            hub.answer(live, incoming.request_id, incoming.answer)
        except AnswerRefused as exc:
            outbox.put(frame("error", session_id, _error(exc.code, str(exc))))
    elif isinstance(incoming, CancelRun):
        if not await hub.cancel_run(live):
            outbox.put(frame("error", session_id, _error("not_running", "no run to cancel")))
    elif isinstance(incoming, Ping):
        outbox.put(frame("pong", session_id, {}))


def _error(code: str, message: str) -> dict[str, str]:
    return {"code": code, "message": message}
