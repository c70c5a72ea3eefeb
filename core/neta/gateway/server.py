"""The WebSocket endpoint: one connection attached to one session."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from neta.errors import HostError, SessionOwned, StorageUnavailable, quoted_id
from neta.hosting.hub import Connection, SessionHub
from neta.hosting.protocol import (
    ClientFrame,
    Ping,
    command_of,
    error_frame,
    frame,
    parse_frame,
)

POLICY_VIOLATION = 1008
TRY_AGAIN_LATER = 1013

_log = logging.getLogger("neta.gateway")


class QueueOutbox:
    """A connection's outgoing frames, in order, drained by its writer task.

    At most ``limit`` frames wait: a client that falls that far behind is disconnected (it
    may reconnect; pending questions are re-sent) rather than let the queue grow without end.
    Once closed, frames are dropped.
    """

    def __init__(self, limit: int) -> None:
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.limit = limit
        self.closed = False
        self.close_code = 1000
        self.close_reason = ""

    def put(self, frame: dict[str, Any]) -> None:
        """Queue a frame (or close the connection if the client is too far behind)."""
        if self.closed:
            return
        if self.queue.qsize() >= self.limit:
            while not self.queue.empty():
                self.queue.get_nowait()
            self.close(TRY_AGAIN_LATER, "the client does not read its frames fast enough")
            return
        self.queue.put_nowait(frame)

    def close(self, code: int, reason: str) -> None:
        """Send what is queued, then close the connection with ``code``."""
        if not self.closed:
            self.closed = True
            self.close_code, self.close_reason = code, reason
            self.queue.put_nowait(None)


async def serve_connection(ws: WebSocket, hub: SessionHub) -> None:
    """Run one WebSocket connection until the client leaves.

    Who may connect is checked (``refusal``) before the handshake is accepted, so a refused
    client creates no session state (it gets HTTP 403). ``?sessionId=`` reattaches to an
    existing session (its pending questions and approvals are re-sent in ``session_ready``);
    without it a new session starts.
    """
    refused = hub.refusal(
        authorization=ws.headers.get("authorization"),
        query_token=ws.query_params.get("token"),
        origin=ws.headers.get("origin"),
        host=ws.headers.get("host"),
        server=ws.scope.get("server"),
    )
    if refused is not None:
        await ws.close(code=POLICY_VIOLATION, reason=refused[1])
        return
    wanted = ws.query_params.get("sessionId")
    try:
        # A new connection follows the session's frames from here (or where it left off).
        connection = await hub.connect(wanted, ws.query_params.get("lastEventId") or None)
    except HostError as exc:
        await ws.accept()
        await ws.send_text(json.dumps(error_frame(wanted or "", exc)))
        passing = isinstance(exc, StorageUnavailable | SessionOwned)  # not a final refusal
        await ws.close(TRY_AGAIN_LATER if passing else POLICY_VIOLATION)
        return
    session_id = connection.session_id
    outbox = QueueOutbox(hub.config.max_queued_frames)
    await hub.listen(connection, outbox)
    writer: asyncio.Task[None] | None = None
    try:
        await hub.tell_lost(connection)
        await ws.accept()
        writer = asyncio.create_task(_write(ws, outbox))
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                break
            text = message.get("text")
            payload = text if text is not None else message.get("bytes") or b""
            try:
                await _handle(payload, connection, hub, outbox)
            except HostError as exc:
                outbox.put(error_frame(session_id, exc))
            except Exception:  # one bad frame must not take the connection down
                _log.exception("frame of session %s failed", session_id)
                failed = HostError("the server failed on this frame", code="internal")
                outbox.put(error_frame(session_id, failed))
    except WebSocketDisconnect:
        pass
    finally:
        outbox.closed = True
        if writer is not None:
            writer.cancel()
        await hub.disconnect(connection)
        if writer is not None:
            await asyncio.wait({writer})


async def _write(ws: WebSocket, outbox: QueueOutbox) -> None:
    try:
        while True:
            item = await outbox.queue.get()
            if item is None:
                await ws.close(code=outbox.close_code, reason=outbox.close_reason)
                return
            await ws.send_text(json.dumps(item, default=str))
    except (WebSocketDisconnect, RuntimeError, OSError):
        pass  # the client is gone; the reader sees the disconnect and cleans up
    finally:
        outbox.closed = True


async def _handle(
    payload: str | bytes, connection: Connection, hub: SessionHub, outbox: QueueOutbox
) -> None:
    """Act on one client frame; a refusal raises ``HostError`` (sent back as an error frame)."""
    incoming: ClientFrame = parse_frame(payload, hub.config.max_frame_bytes)
    session_id = connection.session_id
    if incoming.session_id not in (None, session_id):
        message = f"this connection belongs to session {quoted_id(session_id)}"
        raise HostError(message, code="forbidden")
    if isinstance(incoming, Ping):
        outbox.put(frame("pong", session_id, {}))
    else:
        await hub.act(session_id, command_of(incoming), via=connection)
