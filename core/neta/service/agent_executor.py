"""REST endpoints under ``/v1``: create a session, send it messages, read it, delete it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Request, Response, status
from pydantic import BaseModel, Field

from neta.hosting.auth import token_ok
from neta.hosting.hub import Busy, LiveSession, SessionHub, UnknownSession


class NewSession(BaseModel):
    """A created session."""

    sessionId: str


class MessageIn(BaseModel):
    """A user message."""

    text: str = Field(min_length=1)


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


def _authorized(request: Request, authorization: Annotated[str | None, Header()] = None) -> None:
    if not token_ok(_hub(request).config.token, None, authorization):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "missing or wrong token",
            headers={"WWW-Authenticate": "Bearer"},
        )


HubDep = Annotated[SessionHub, Depends(_hub)]
router = APIRouter(prefix="/v1", tags=["sessions"], dependencies=[Depends(_authorized)])


def _live(hub: SessionHub, session_id: str) -> LiveSession:
    try:
        return hub.get(session_id)
    except UnknownSession:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no session {session_id!r}") from None


def _todos(live: LiveSession) -> list[dict[str, Any]]:
    store = live.session.context.todo_store
    return list(store.snapshot().item_dicts()) if store is not None else []


@router.post("/sessions", status_code=status.HTTP_201_CREATED)
async def create_session(hub: HubDep) -> NewSession:
    """Start a session (no live channel: a clarify question ends the turn)."""
    return NewSession(sessionId=hub.create("service").session.session_id)


@router.post("/sessions/{session_id}/messages")
async def send_message(session_id: str, body: MessageIn, hub: HubDep) -> MessageOut:
    """Run the agent on a message and answer with its reply; 409 while a run is in progress."""
    live = _live(hub, session_id)
    try:
        result = await hub.start_run(live, body.text)
    except Busy:
        raise HTTPException(status.HTTP_409_CONFLICT, "a run is already in progress") from None
    return MessageOut(
        reply=result.text,
        outcome=result.outcome,
        reason=result.reason,
        events=[e.model_dump() for e in result.events],
        todos=_todos(live),
    )


@router.get("/sessions/{session_id}")
async def read_session(session_id: str, hub: HubDep) -> SessionOut:
    """The session's history and todo list."""
    live = _live(hub, session_id)
    return SessionOut(
        sessionId=session_id,
        messages=[m.model_dump(exclude_defaults=True) for m in live.session.history],
        todos=_todos(live),
        running=live.running,
    )


@router.delete("/sessions/{session_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_session(session_id: str, hub: HubDep) -> Response:
    """End the session and forget it."""
    _live(hub, session_id)
    await hub.delete(session_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
