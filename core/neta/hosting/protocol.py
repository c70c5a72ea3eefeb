"""What host apps and their clients say to each other: WebSocket frames both ways, REST bodies.

Every WebSocket frame is a JSON object ``{"type", "sessionId", "data"}``; clients may also put
the fields of ``data`` at the top level. Text frames are expected; a binary frame is read as
UTF-8 text.

```
dir  type               data
---  -----------------  ---------------------------------------------------------------------
c→s  user_message       {text}: run the agent on text (1 to MAX_TEXT_CHARS characters)
c→s  clarify_response   {requestId, answer}: answer a pending question (or an approval, in
                        words: "allow once", "allow always", "deny: REASON")
c→s  approval_response  {requestId, choice, reason}: answer a pending approval; choice is
                        allow_once | allow_always (when offered) | deny; reason (optional) is
                        what the model reads of a denial
c→s  cancel_run         {}: cancel the session's run
c→s  ping               {}: answered with pong
s→c  session_ready      {sessionId, pendingClarify: [{requestId, question, choices}],
                        pendingApprovals: [APPROVAL]}
s→c  run_started, text_delta, tool_call_start, tool_output, tool_progress, tool_result,
     todo_update, permission_decision, provider_retry, model_fallback, run_finished:
                        the runtime's events (neta.events) without type and session_id;
                        run_finished {outcome}: completed | awaiting_input | max_turns |
                        cancelled | error | interrupted (the server stopped, or the
                        process running it died, before it finished)
s→c  clarify_request    {requestId, question, choices}
s→c  clarify_resolved   {requestId, outcome}: answered | timed_out | cancelled | server_restarted
s→c  approval_request   APPROVAL: a tool call waits for a person's yes or no
s→c  approval_resolved  {requestId, outcome, choice}: outcome as for clarify_resolved; choice
                        (allow_once | allow_always | deny) when answered, else null
s→c  pong               {}
s→c  error              {code, message}: code is a key of HTTP_STATUS
```

``APPROVAL`` is ``{requestId, callId, title, tool, toolset, effect, arguments, preview, reason,
always, choices, agentId}``: ``requestId`` is what the answer names, ``callId`` the tool call's
id, ``preview`` what would happen (the command line, the diff an edit would make),
``always`` the rules "allow always" keeps, ``choices`` the answers offered
(``neta.permissions.ApprovalRequest``). A session with a live client (``/ws``) asks and waits
for the answer; a REST session leaves the call pending and ends the run (``awaiting_input``):
its ``requestId`` is then the call's id, and the next message answers it (``MessageIn``).

REST (``/v1``) takes and returns the models at the end of this module (``MessageIn``,
``MessageOut``, ``NewSession``, ``SessionOut``); a refusal is ``{"detail", "code"}`` with the
status the same table gives.

Both host apps act on a session through ``SessionHub.act`` with one of the commands below
(``SendMessage``, ``SendAndWait``, ``AnswerQuestion``, ``Approve``, ``Cancel``); on a host of
several workers the hub sends a command to the worker running the session as JSON
(``command_json``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from neta.errors import BadFrame, HostError
from neta.events import ApprovalRequested, ClarifyRequest, Outcome
from neta.permissions import ApprovalAnswer, ApprovalRequest, Choice, Denial

MAX_TEXT_CHARS = 200_000
"""The longest message text (about 50,000 tokens); a longer one is refused as invalid."""

HTTP_STATUS: dict[str, int] = {
    "frame_too_large": 413,
    "body_timeout": 408,
    "invalid_json": 400,
    "unknown_type": 400,
    "invalid_frame": 422,
    "forbidden": 403,
    "busy": 409,
    "session_owned": 409,
    "not_running": 409,
    "unknown_request": 404,
    "already_resolved": 409,
    "expired": 410,
    "invalid_answer": 422,
    "unknown_session": 404,
    "session_deleted": 404,
    "storage_unavailable": 503,
    "owner_unreachable": 503,
    "server_stopping": 503,
    "internal": 500,
}
"""Every error code a client can get, and the HTTP status that means the same."""


def http_status(error: HostError) -> int:
    """The HTTP status of a host error (500 for a code missing from ``HTTP_STATUS``)."""
    return HTTP_STATUS.get(error.code, 500)


# -- text clients send -------------------------------------------------------------------------


def _storable(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # JSON lets "\ud800" through; such a message could never be saved or sent to a model
        raise ValueError("text contains an unpaired surrogate (not valid Unicode)") from None
    return text


UserText = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_TEXT_CHARS), AfterValidator(_storable)
]
"""A user's message: 1 to ``MAX_TEXT_CHARS`` characters of valid Unicode."""

AnswerText = Annotated[str, StringConstraints(max_length=MAX_TEXT_CHARS), AfterValidator(_storable)]
"""An answer to a question: valid Unicode (the registry refuses an empty one)."""

MAX_APPROVALS = 100
"""The most approvals one REST message may answer."""


# -- client → server ---------------------------------------------------------------------------


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


class ApprovalResponse(_Frame):
    """Answer the pending approval ``request_id``: run the call, or not (and why)."""

    type: Literal["approval_response"]
    request_id: str = Field(alias="requestId", min_length=1)
    choice: Choice
    reason: AnswerText = ""

    def answer(self) -> ApprovalAnswer:
        """The answer it gives."""
        return ApprovalAnswer(self.choice, self.reason)


class CancelRun(_Frame):
    """Cancel the session's run."""

    type: Literal["cancel_run"]


class Ping(_Frame):
    """Check the connection; answered with ``pong``."""

    type: Literal["ping"]


ClientFrame = Annotated[
    UserMessage | ClarifyResponse | ApprovalResponse | CancelRun | Ping,
    Field(discriminator="type"),
]
_CLIENT_FRAME: TypeAdapter[ClientFrame] = TypeAdapter(ClientFrame)
_CLIENT_TYPES = ("user_message", "clarify_response", "approval_response", "cancel_run", "ping")


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
            f"frame of {size} bytes exceeds the {max_bytes}-byte limit", code="frame_too_large"
        )
    try:
        text = payload.decode("utf-8") if isinstance(payload, bytes) else payload
        raw: Any = json.loads(text)
    except UnicodeDecodeError:
        raise BadFrame("binary frame is not UTF-8 text", code="invalid_json") from None
    except ValueError as exc:
        raise BadFrame(f"frame is not valid JSON: {exc}", code="invalid_json") from None
    except RecursionError:
        raise BadFrame("frame is nested too deeply", code="invalid_json") from None
    if not isinstance(raw, dict):
        raise BadFrame("a frame must be a JSON object")
    data = raw.get("data")
    merged = {**data, **raw} if isinstance(data, dict) else raw
    kind = merged.get("type")
    if kind not in _CLIENT_TYPES:
        raise BadFrame(f"unknown frame type {repr(kind)[:80]}", code="unknown_type")
    try:
        return _CLIENT_FRAME.validate_python(merged)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"][1:]) or "frame"
        raise BadFrame(f"{kind}: {where}: {first['msg']}") from None


# -- server → client ---------------------------------------------------------------------------


class _Data(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class PendingQuestion(_Data):
    """A question waiting for its answer (``clarify_request`` data, ``pendingClarify`` items)."""

    request_id: str = Field(alias="requestId")
    question: str
    choices: list[str] | None


class SessionReady(_Data):
    """The first frame of a connection: the session, the questions and approvals it waits on."""

    session_id: str = Field(alias="sessionId")
    pending_clarify: list[PendingQuestion] = Field(alias="pendingClarify")
    pending_approvals: list[dict[str, Any]] = Field(default_factory=list, alias="pendingApprovals")


ResolvedOutcome = Literal["answered", "timed_out", "cancelled", "server_restarted"]


class ClarifyResolved(_Data):
    """A question is over: answered, timed out, cancelled, or lost to a server restart."""

    request_id: str = Field(alias="requestId")
    outcome: ResolvedOutcome


class ApprovalResolved(_Data):
    """An approval is over; ``choice`` is the answer's when it was answered."""

    request_id: str = Field(alias="requestId")
    outcome: ResolvedOutcome
    choice: Choice | None = None


def resolved_frame(
    session_id: str,
    request_id: str,
    outcome: ResolvedOutcome,
    *,
    approval: bool = False,
    choice: Choice | None = None,
) -> dict[str, Any]:
    """The frame that tells a question (``clarify_resolved``) or approval is over."""
    if approval:
        data = ApprovalResolved(request_id=request_id, outcome=outcome, choice=choice)
        return frame("approval_resolved", session_id, data)
    return frame(
        "clarify_resolved", session_id, ClarifyResolved(request_id=request_id, outcome=outcome)
    )


class ErrorData(_Data):
    """What a client asked for was refused (``code`` as in ``HTTP_STATUS``)."""

    code: str
    message: str


def frame(kind: str, session_id: str, data: dict[str, Any] | _Data) -> dict[str, Any]:
    """A server-to-client frame: ``{"type", "sessionId", "data"}``."""
    if isinstance(data, _Data):
        data = data.model_dump(mode="json", by_alias=True)
    return {"type": kind, "sessionId": session_id, "data": data}


def error_frame(session_id: str, error: HostError) -> dict[str, Any]:
    """An ``error {code, message}`` frame telling the client why ``error`` happened."""
    return frame("error", session_id, ErrorData(code=error.code, message=str(error)))


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
    elif isinstance(event, ApprovalRequested):
        data = {**approval_json(event.approval, event.request_id), "agent_id": event.agent_id}
    else:
        data = event.model_dump(mode="json", exclude={"type", "session_id"})
    return frame(event.type, session_id, data)


def approval_payload(request: ApprovalRequest, request_id: str) -> dict[str, Any]:
    """``request`` as clients get it (``APPROVAL``), answered by ``request_id``."""
    return {**approval_json(request.public(), request_id), "title": request.title}


def approval_json(approval: Mapping[str, Any], request_id: str) -> dict[str, Any]:
    """An approval's JSON (``ApprovalRequest.public``) as clients get it (``APPROVAL``).

    It is answered by ``request_id``, names its call (``callId``) and has its ``title``.
    """
    call_id = approval.get("callId") or approval.get("requestId") or request_id
    title = approval.get("title") or _title(approval)
    return {**approval, "requestId": request_id, "callId": call_id, "title": title}


def _title(approval: Mapping[str, Any]) -> str:
    """``ApprovalRequest.title`` of the request ``approval`` is the JSON of."""
    effect = approval.get("effect")
    if effect not in ("reads", "writes", "runs"):
        return f"allow {approval.get('tool')}?"
    agent = approval.get("agentId")
    request = ApprovalRequest(
        request_id="",
        tool=str(approval.get("tool")),
        toolset=str(approval.get("toolset")),
        effect=effect,
        arguments={},
        preview="",
        reason="",
        agent_id=None if agent is None else str(agent),
    )
    return request.title


def denial_json(denial: Denial) -> dict[str, Any]:
    """A call that was denied, as a REST reply lists it."""
    return {
        "callId": denial.call_id,
        "tool": denial.tool,
        "arguments": dict(denial.arguments),
        "reason": denial.reason,
        "by": denial.by,
    }


# -- REST --------------------------------------------------------------------------------------


class NewSession(BaseModel):
    """A created session."""

    sessionId: str


MessageText = Annotated[
    str, StringConstraints(max_length=MAX_TEXT_CHARS), AfterValidator(_storable)
]


class ApprovalIn(BaseModel):
    """An answer to a call waiting for approval: ``choice``, and for a denial its ``reason``."""

    model_config = ConfigDict(extra="forbid")

    choice: Choice
    reason: AnswerText = ""


ApprovalAnswers = dict[str, ApprovalAnswer | str]
"""Answers to waiting calls, by request id: a choice, or its words (``"deny: why"``)."""


class MessageIn(BaseModel):
    """A user message, and answers to the calls the last run left waiting for approval.

    ``approvals`` maps a waiting call's ``requestId`` (``MessageOut.approvals``) to
    ``{"choice": "allow_once" | "allow_always" | "deny", "reason": ...}`` or to the answer in
    words (``"allow once"``, ``"deny: not that file"``). The answered calls run (or are
    denied) first; then ``text``, which may then be empty, goes to the model.
    """

    text: MessageText = ""
    approvals: dict[str, ApprovalIn | AnswerText] | None = Field(
        default=None, max_length=MAX_APPROVALS
    )

    @model_validator(mode="after")
    def _says_something(self) -> MessageIn:
        if not self.text and not self.approvals:
            raise ValueError("text is empty: send a message, or approvals to answer")
        return self

    def answers(self) -> ApprovalAnswers:
        """The approvals it answers, as ``Agent.run`` takes them."""
        return _answers(self.approvals or {})


def _answers(given: Mapping[str, ApprovalIn | str]) -> ApprovalAnswers:
    return {
        request_id: ApprovalAnswer(answer.choice, answer.reason)
        if isinstance(answer, ApprovalIn)
        else answer
        for request_id, answer in given.items()
    }


def answers_json(answers: Mapping[str, ApprovalAnswer | str]) -> dict[str, Any]:
    """Approval answers as JSON (a command for the worker running the session)."""
    return {
        request_id: given
        if isinstance(given, str)
        else {"choice": given.choice, "reason": given.reason}
        for request_id, given in answers.items()
    }


_ANSWERS: TypeAdapter[dict[str, ApprovalIn | AnswerText]] = TypeAdapter(
    dict[str, ApprovalIn | AnswerText]
)


def answers_from_json(raw: object) -> ApprovalAnswers:
    """Approval answers read back from ``answers_json``.

    Raises:
        BadFrame: ``raw`` holds something that is no answer.
    """
    try:
        given = _ANSWERS.validate_python(raw or {})
    except ValidationError as exc:
        raise BadFrame(f"approvals: {exc.errors(include_url=False)[0]['msg']}") from None
    return _answers(given)


class MessageOut(BaseModel):
    """The outcome of one run: the reply (a question when ``awaiting_input``), events, todos.

    ``approvals`` are the calls waiting for approval (``APPROVAL`` objects; the next message
    answers them); ``denials`` the calls that were denied and did not run (``callId``,
    ``tool``, ``arguments``, ``reason``, ``by``).
    """

    reply: str
    outcome: Outcome
    reason: str
    events: list[dict[str, Any]]
    todos: list[dict[str, Any]]
    approvals: list[dict[str, Any]] = Field(default_factory=list)
    denials: list[dict[str, Any]] = Field(default_factory=list)


class SessionOut(BaseModel):
    """A session's history and todo list."""

    sessionId: str
    messages: list[dict[str, Any]]
    todos: list[dict[str, Any]]
    running: bool


class Refusal(BaseModel):
    """A refused REST request: the message and the same code a WebSocket client would get."""

    detail: str
    code: str


# -- host app → hub (``SessionHub.act``) --------------------------------------------------------


@dataclass(frozen=True)
class SendMessage:
    """Start a run of ``text``; its events go to the session's clients.

    ``approvals`` answer the calls the session's last run left waiting for approval (by
    request id); they run (or are denied) first, then ``text``, which may then be empty.
    """

    text: str
    approvals: ApprovalAnswers | None = None


@dataclass(frozen=True)
class SendAndWait:
    """Run ``text`` (as ``SendMessage``) to its end; ``act`` answers with the run's outcome."""

    text: str
    approvals: ApprovalAnswers | None = None


@dataclass(frozen=True)
class AnswerQuestion:
    """Answer the pending question ``request_id`` (or an approval, in words)."""

    request_id: str
    answer: str


@dataclass(frozen=True)
class Approve:
    """Answer the pending approval ``request_id``: run the call, or not (and why)."""

    request_id: str
    choice: Choice
    reason: str = ""

    def answer(self) -> ApprovalAnswer:
        """The answer it gives."""
        return ApprovalAnswer(self.choice, self.reason)


@dataclass(frozen=True)
class Cancel:
    """Cancel the session's run."""


Command = SendMessage | AnswerQuestion | Approve | Cancel
"""A command ``SessionHub.act`` carries out and answers with nothing."""


def command_of(incoming: UserMessage | ClarifyResponse | ApprovalResponse | CancelRun) -> Command:
    """The command a client frame gives."""
    if isinstance(incoming, UserMessage):
        return SendMessage(incoming.text)
    if isinstance(incoming, ClarifyResponse):
        return AnswerQuestion(incoming.request_id, incoming.answer)
    if isinstance(incoming, ApprovalResponse):
        return Approve(incoming.request_id, incoming.choice, incoming.reason)
    return Cancel()


def command_json(command: Command) -> dict[str, Any]:
    """``command`` as JSON, for the worker running the session."""
    if isinstance(command, SendMessage):
        sent: dict[str, Any] = {"type": "message", "text": command.text}
        if command.approvals:
            sent["approvals"] = answers_json(command.approvals)
        return sent
    if isinstance(command, AnswerQuestion):
        return {
            "type": "clarify_response",
            "requestId": command.request_id,
            "answer": command.answer,
        }
    if isinstance(command, Approve):
        return {
            "type": "approval_response",
            "requestId": command.request_id,
            "choice": command.choice,
            "reason": command.reason,
        }
    return {"type": "cancel_run"}


def command_from_json(raw: Mapping[str, Any]) -> Command:
    """A command read back from ``command_json``.

    Raises:
        BadFrame: its approvals, or its approval answer, are not valid.
        HostError: ``unknown_type``, it is no command.
    """
    kind = raw.get("type")
    if kind == "message":
        approvals = answers_from_json(raw.get("approvals"))
        return SendMessage(str(raw.get("text", "")), approvals or None)
    if kind == "clarify_response":
        return AnswerQuestion(str(raw.get("requestId")), str(raw.get("answer")))
    if kind == "approval_response":
        try:
            answered = ApprovalResponse.model_validate(raw)
        except ValidationError as exc:
            raise BadFrame(f"approval_response: {exc.errors()[0]['msg']}") from None
        return Approve(answered.request_id, answered.choice, answered.reason)
    if kind == "cancel_run":
        return Cancel()
    raise HostError(f"unknown command {kind!r}", code="unknown_type")
