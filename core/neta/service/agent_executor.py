"""REST endpoints under ``/v1``: create a session, send it messages, read it, delete it."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Request, Response, status
from pydantic import BaseModel

from neta.hosting.auth import refusal
from neta.hosting.hub import Busy, SessionHub, UnknownSession
from neta.hosting.inputs import UserText


class NewSession(BaseModel):
    """A created session."""

    sessionId: str


class MessageIn(BaseModel):
    """A user message."""

    text: UserText


class MessageOut(BaseModel):
    """The outcome of one run: the reply (a question when ``awaiting_input``), events, todos."""

    reply: str
    outcome: str
    reason: str
    events: list[dict[str, Any]]
    todos: list[dict[str, Any]]


class SessionOut(BaseModel):
    """A session's history and todo list."""

    sessionId: str
    messages: list[dict[str, Any]]
    todos: list[dict[str, Any]]
    running: bool


def _hub(request: Request) -> SessionHub:
    hub: SessionHub = request.app.state.hub
    return hub


def _authorized(
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
    origin: Annotated[str | None, Header()] = None,
) -> None:
    refused = refusal(
        _hub(request).config.token,
        authorization=authorization,
        origin=origin,
        server=request.scope.get("server"),
    )
    if refused is not None:
        status_code, message = refused
        headers = {"WWW-Authenticate": "Bearer"} if status_code == 401 else None
        raise HTTPException(status_code, message, headers=headers)


HubDep = Annotated[SessionHub, Depends(_hub)]
router = APIRouter(prefix="/v1", tags=["sessions"], dependencies=[Depends(_authorized)])


def _not_found(session_id: str) -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, f"no session {session_id!r}")


@router.post("/sessions", status_code=status.HTTP_201_CREATED)
async def create_session(hub: HubDep) -> NewSession:
    """Start a session (no live channel: a clarify question ends the turn)."""
    live = hub.create("service")
    hub.release(live)
    return NewSession(sessionId=live.session_id)


@router.post(
    "/sessions/{session_id}/messages",
    responses={404: {"description": "No such session"}, 409: {"description": "Busy"}},
)
async def send_message(session_id: str, body: MessageIn, hub: HubDep) -> MessageOut:
    """Run the agent on a message and answer with its reply.

    409 while the session has a run in progress (this client's or a WebSocket client's);
    404 if the session does not exist or is deleted before the run ends.
    """
    try:
        live = hub.get(session_id)
        run = hub.start_run(live, body.text)
    except UnknownSession:
        raise _not_found(session_id) from None
    except Busy:
        raise HTTPException(status.HTTP_409_CONFLICT, "a run is already in progress") from None
    # The run belongs to the hub: should this request be cancelled, the run goes on.
    await asyncio.wait({run})
    if not hub.store.exists(session_id):
        raise _not_found(session_id)
    todos = live.todo_items()
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
    )


@router.get("/sessions/{session_id}", responses={404: {"description": "No such session"}})
async def read_session(session_id: str, hub: HubDep) -> SessionOut:
    """The session's history and todo list."""
    try:
        view = hub.view(session_id)
    except UnknownSession:
        raise _not_found(session_id) from None
    return SessionOut(
        sessionId=session_id,
        messages=[m.model_dump(mode="json", exclude_defaults=True) for m in view.history],
        todos=view.todos,
        running=view.running,
    )


@router.delete(
    "/sessions/{session_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={404: {"description": "No such session"}},
)
async def delete_session(session_id: str, hub: HubDep) -> Response:
    """End the session (cancelling its run and questions) and forget it."""
    try:
        await hub.delete(session_id)
    except UnknownSession:
        raise _not_found(session_id) from None
    return Response(status_code=status.HTTP_204_NO_CONTENT)
