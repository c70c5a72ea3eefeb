"""The typed events a run emits to its ``on_event`` callback (the CLI renders, the gateway sends).

Every event has a ``type`` (its discriminator), the ``session_id`` of the session it belongs to,
and ``agent_id``: ``None`` for the top-level agent, the child's id for a crew sub-agent.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ApprovalRequested",
    "ClarifyRequest",
    "Event",
    "ModelFallback",
    "Outcome",
    "PermissionDecided",
    "ProviderRetry",
    "RunFinished",
    "RunStarted",
    "TextDelta",
    "TodoUpdate",
    "ToolCallStart",
    "ToolOutput",
    "ToolProgress",
    "ToolResultEvent",
]

Outcome = Literal[
    "completed", "awaiting_input", "max_turns", "limit", "cancelled", "error", "interrupted"
]
"""How a run ended.

``limit`` is a run stopped at a usage limit (``neta.UsageLimits``), its ``reason`` naming it.

``interrupted`` is never the runtime's own: a host announces it for a run its server's stop
cut, or whose server process died mid-run (the session lives on; its history ends at the last
save, with a note).
"""


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    session_id: str = ""
    agent_id: str | None = None


class RunStarted(_Event):
    """A run began: the user's message and the tools the model was given."""

    type: Literal["run_started"] = "run_started"
    message: str
    tools: list[str]


class TextDelta(_Event):
    """A piece of the model's reply text, as it streams."""

    type: Literal["text_delta"] = "text_delta"
    text: str


class ToolCallStart(_Event):
    """The model called a tool; it is about to run."""

    type: Literal["tool_call_start"] = "tool_call_start"
    call_id: str
    name: str
    arguments: str


class ToolResultEvent(_Event):
    """A tool call finished (or failed: ``is_error``)."""

    type: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    content: str
    is_error: bool = False
    duration_ms: float = 0.0
    data: dict[str, object] = Field(default_factory=dict)


class ToolProgress(_Event):
    """A running tool reports how far it got (an MCP server's progress notifications, say)."""

    type: Literal["tool_progress"] = "tool_progress"
    name: str
    progress: float
    total: float | None = None
    message: str = ""


class ToolOutput(_Event):
    """What a running tool has just written (a ``bash`` command's output), as it comes.

    ``text`` continues the previous ``tool_output`` of the same ``name`` (and ``agent_id``);
    lines may be split between two events. It shows progress only: the tool's result still
    holds its output, and a long output streams only its beginning. A tool that streams runs
    one call at a time (``bash`` is sequential), so ``name`` tells which call it is.
    """

    type: Literal["tool_output"] = "tool_output"
    name: str
    text: str


class TodoUpdate(_Event):
    """The session's todo list changed; ``todos`` is the whole new list."""

    type: Literal["todo_update"] = "todo_update"
    todos: list[dict[str, object]]
    counts: dict[str, int]
    revision: int


class ClarifyRequest(_Event):
    """A tool asks the user a question and waits for the answer."""

    type: Literal["clarify_request"] = "clarify_request"
    request_id: str
    question: str
    choices: list[str] | None = None


class ApprovalRequested(_Event):
    """A tool call waits for a person's approval; ``approval`` is the request's JSON.

    ``approval`` holds ``requestId`` (the call's id), ``tool``, ``toolset``, ``effect``,
    ``arguments``, ``preview`` (the command, or the diff an edit would make), ``reason``,
    ``always`` (the rules "allow always" keeps) and ``choices``.
    """

    type: Literal["approval_request"] = "approval_request"
    request_id: str
    approval: dict[str, object]


class PermissionDecided(_Event):
    """A tool call was allowed or denied, and by whom.

    ``decided_by`` is ``rule``, ``mode``, ``user`` (or the name of who answered),
    ``no one to ask`` or ``timeout``; ``rule`` is the deciding rule with its source
    (``bash(pytest *) from --allow``), empty when the mode decided; ``at`` is the Unix time.
    """

    type: Literal["permission_decision"] = "permission_decision"
    call_id: str
    name: str
    action: Literal["allow", "deny"]
    decided_by: str
    rule: str = ""
    reason: str = ""
    at: float = 0.0


class ProviderRetry(_Event):
    """A model request failed in a way that may pass; it is tried again after ``delay`` s.

    ``attempt`` is the try that failed (1 for the first) out of ``max_tries``; ``reason`` is a
    few words (``rate limited``, ``server error 503``); ``message`` is the failure itself.
    """

    type: Literal["provider_retry"] = "provider_retry"
    attempt: int
    max_tries: int
    delay: float
    reason: str
    message: str = ""


class ModelFallback(_Event):
    """A model failed for good; the next model of the fallback list is asked the same request.

    It failed in a way no retry fixes, or its retries were spent. ``failed`` and ``model`` name
    the models as ``provider:model``; ``model`` answers from here on (for the rest of the run)
    unless another ``model_fallback`` follows. ``reason`` is a few words (``authentication
    failed (401)``, ``overloaded``, ``context too long``); ``message`` is the failure itself.
    Text the failed model streamed is superseded: the reply streams anew.
    """

    type: Literal["model_fallback"] = "model_fallback"
    failed: str
    model: str
    reason: str
    message: str = ""


class RunFinished(_Event):
    """The run ended; ``outcome`` says how, ``reason`` why, ``text`` is the final reply."""

    type: Literal["run_finished"] = "run_finished"
    outcome: Outcome
    text: str = ""
    reason: str = ""
    turns: int = 0


Event = Annotated[
    RunStarted
    | TextDelta
    | ToolCallStart
    | ToolResultEvent
    | ToolOutput
    | ToolProgress
    | TodoUpdate
    | ClarifyRequest
    | ApprovalRequested
    | PermissionDecided
    | ProviderRetry
    | ModelFallback
    | RunFinished,
    Field(discriminator="type"),
]
"""Any runtime event (a pydantic discriminated union on ``type``)."""
