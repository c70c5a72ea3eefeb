"""REST endpoints under ``/v1``: create a session, send it messages, read it, delete it.

A refusal is a ``HostError``; the app answers it once for every route (``neta.server``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request, Response, status

from neta.errors import SessionOwned, UnknownSession
from neta.hosting.auth import refusal
from neta.hosting.hub import SessionHub
from neta.hosting.protocol import (
    ApprovalAnswers,
    MessageIn,
    MessageOut,
    NewSession,
    Refusal,
    SessionOut,
    approval_json,
    denial_json,
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
    refused = refusal(
        _hub(request).config.token,
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
    503: {"model": Refusal, "description": "The session store cannot write"},
}


@router.post("/sessions", status_code=status.HTTP_201_CREATED, responses={503: _REFUSALS[503]})
async def create_session(hub: HubDep) -> NewSession:
    """Start a session.

    It has no live channel: a clarify question, or a tool call needing approval, ends the
    turn, and the next message answers it.
    """
    live = await hub.create_async("service")
    await hub.release_async(live)
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
    answers = body.answers() or None
    try:
        live = await hub.get_async(session_id)
    except SessionOwned:
        if hub.cluster is None:
            raise
        return await _run_on_owner(hub, session_id, body.text, answers)
    try:
        run = hub.start_run(live, body.text, claimed=True, approvals=answers)
    except BaseException:
        hub.release(live)
        raise
    # The run belongs to the hub: should this request be cancelled, the run goes on.
    await asyncio.wait({run})
    await hub.released(live)  # the session's lease is free for another worker's request
    if not await hub.store.run_calls().exists(session_id):
        raise UnknownSession(session_id)
    if live.failure is not None:  # the run stopped: the session could not be saved
        raise live.failure
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
        approvals=[approval_json(r.public(), r.request_id) for r in result.approvals],
        denials=[denial_json(d) for d in result.denials],
    )


_NOT_EVENTS = {"clarify_resolved", "approval_resolved", "error", "pong", "session_ready"}


async def _run_on_owner(
    hub: SessionHub, session_id: str, text: str, answers: ApprovalAnswers | None
) -> MessageOut:
    """Run a message on the worker that owns the session, answering from its frames."""
    assert hub.cluster is not None
    frames = await hub.cluster.run_on_owner(session_id, text, answers)
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
        todos=(await hub.view_async(session_id)).todos,
        approvals=_waiting(frames),
        denials=_denied(frames),
    )


def _waiting(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
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


def _denied(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
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


@router.get("/sessions/{session_id}", responses={404: _REFUSALS[404]})
async def read_session(session_id: str, hub: HubDep) -> SessionOut:
    """The session's history and todo list."""
    view = await hub.view_async(session_id)
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
