"""REST endpoints under ``/v1``: create a session, send it messages, read it, delete it.

A refusal is a ``HostError``; the app answers it once for every route (``neta.server``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request, Response, status

from neta.hosting.hub import SessionHub
from neta.hosting.protocol import (
    MessageIn,
    MessageOut,
    NewSession,
    Refusal,
    SendAndWait,
    SessionOut,
)


def _hub(request: Request) -> SessionHub:
    hub: SessionHub = request.app.state.hub
    return hub


def authorized(
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
    origin: Annotated[str | None, Header()] = None,
    host: Annotated[str | None, Header()] = None,
    token: Annotated[str | None, Query(include_in_schema=False)] = None,
) -> None:
    """Refuse (401, 403) a request that may not reach the agent (see ``refusal``).

    The token comes in ``Authorization: Bearer``, or in ``?token=`` (as on the WebSocket).
    """
    refused = _hub(request).refusal(
        authorization=authorization,
        query_token=token,
        origin=origin,
        host=host,
        server=request.scope.get("server"),
    )
    if refused is not None:
        status_code, message = refused
        headers = {"WWW-Authenticate": "Bearer"} if status_code == 401 else None
        raise HTTPException(status_code, message, headers=headers)


HubDep = Annotated[SessionHub, Depends(_hub)]
router = APIRouter(prefix="/v1", tags=["sessions"], dependencies=[Depends(authorized)])


_REFUSALS: dict[int | str, dict[str, Any]] = {
    404: {"model": Refusal, "description": "No such session, or no such call waits for approval"},
    409: {"model": Refusal, "description": "Busy, or run by another server process"},
    503: {"model": Refusal, "description": "The session store cannot write, or the server stops"},
}


@router.post("/sessions", status_code=status.HTTP_201_CREATED, responses={503: _REFUSALS[503]})
async def create_session(hub: HubDep) -> NewSession:
    """Start a session.

    It has no live channel: a clarify question, or a tool call needing approval, ends the
    turn, and the next message answers it.
    """
    live = await hub.create("service")
    hub.release(live)
    await hub.released(live)
    return NewSession(sessionId=live.session_id)


@router.post("/sessions/{session_id}/messages", responses=_REFUSALS)
async def send_message(session_id: str, body: MessageIn, hub: HubDep) -> MessageOut:
    """Run the agent on a message and answer with its reply.

    A tool call needing approval ends the run (``awaiting_input``) and is listed in
    ``approvals``; the next message answers it with ``approvals: {requestId: {choice,
    reason}}`` (its ``text`` may then be empty), and the run goes on from that call.

    409 while the session has a run in progress (this client's or a WebSocket client's);
    404 if the session does not exist or is deleted before the run ends, or if ``approvals``
    names a call that does not wait for approval (``unknown_request``).
    """
    return await hub.act(session_id, SendAndWait(body.text, body.answers() or None))


@router.get("/sessions/{session_id}", responses={404: _REFUSALS[404]})
async def read_session(session_id: str, hub: HubDep) -> SessionOut:
    """The session's history and todo list."""
    view = await hub.view(session_id)
    return SessionOut(
        sessionId=session_id,
        messages=[m.model_dump(mode="json", exclude_defaults=True) for m in view.history],
        todos=view.todos,
        running=view.running,
    )


@router.delete(
    "/sessions/{session_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={404: _REFUSALS[404], 409: _REFUSALS[409]},
)
async def delete_session(session_id: str, hub: HubDep) -> Response:
    """End the session (cancelling its run and questions) and forget it."""
    await hub.delete(session_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
