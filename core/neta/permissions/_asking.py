"""The question an approval is, the answer it takes, and asking it over a clarify channel."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from neta.permissions._approvals import allow_rules_for
from neta.permissions._modes import Effect
from neta.terminal_text import sanitize

Choice = Literal["allow_once", "allow_always", "deny"]
"""What a person answers: run this call, run it and every call the offered rules match, or not."""

CHOICE_LABELS: dict[Choice, str] = {
    "allow_once": "allow once",
    "allow_always": "allow always",
    "deny": "deny",
}
"""The words each choice is offered with (a text answer may use either spelling)."""


@dataclass(frozen=True)
class ApprovalRequest:
    """One tool call waiting for a person's yes or no.

    Attributes:
        request_id: the call's id (the provider's), which the answer names.
        tool: the tool's name.
        toolset: the toolset it belongs to.
        effect: what it does (``reads``, ``writes``, ``runs``).
        arguments: the call's arguments, as the model wrote them (decoded).
        preview: what would happen, for a person to read before answering: the command line
            for ``bash``, the diff an edit would make, else the arguments as JSON.
        reason: why it asks (the rule or the mode that asks).
        always: the rules "allow always" would keep for this workspace; empty when no rule
            can allow exactly this call (then "allow always" is not offered).
        agent_id: the crew child that asks, ``None`` for the top-level agent.
        call_id: the model's id of the call (``request_id`` is another when the request
            waits for the next message: ``neta.messages.deferred_approval_id``).
    """

    request_id: str
    tool: str
    toolset: str
    effect: Effect
    arguments: Mapping[str, Any]
    preview: str
    reason: str
    always: tuple[str, ...] = ()
    agent_id: str | None = None
    call_id: str = ""

    @property
    def choices(self) -> tuple[Choice, ...]:
        """The answers offered, in order."""
        if self.always:
            return ("allow_once", "allow_always", "deny")
        return ("allow_once", "deny")

    @property
    def title(self) -> str:
        """One line: which tool wants to do what, and who asks."""
        who = f"sub-agent {self.agent_id}: " if self.agent_id else ""
        verb = {"reads": "read", "writes": "edit", "runs": "run"}[self.effect]
        return f"{who}allow {self.tool} to {verb}?"

    def question(self) -> str:
        """The whole question as text, for a channel that carries only text (clarify)."""
        lines = [f"Approval needed: {self.title}", self.preview]
        if self.always:
            lines.append("'allow always' keeps: " + ", ".join(self.always))
        lines.append(f"({self.reason})")
        lines.append("Answer 'deny: REASON' to tell the model why.")
        return "\n".join(line for line in lines if line)

    def public(self) -> dict[str, Any]:
        """The request as JSON for clients (an ``approval_request`` frame, a REST reply).

        The preview and the title are for a person to read: a control or bidirectional
        character in them is shown escaped (``neta.sanitize``), so that no client's page or
        terminal can show a command other than the one that runs.
        """
        return {
            "requestId": self.request_id,
            "callId": self.call_id or self.request_id,
            "title": sanitize(self.title),
            "tool": self.tool,
            "toolset": self.toolset,
            "effect": self.effect,
            "arguments": dict(self.arguments),
            "preview": sanitize(self.preview),
            "reason": self.reason,
            "always": list(self.always),
            "choices": list(self.choices),
            "agentId": self.agent_id,
        }


@dataclass(frozen=True)
class ApprovalAnswer:
    """A person's answer to an ``ApprovalRequest``.

    Attributes:
        choice: ``allow_once``, ``allow_always`` or ``deny``.
        reason: for a denial, what the model is told (optional).
        by: who answered, for the record (``user``, ``parent``, a client's name).
    """

    choice: Choice
    reason: str = ""
    by: str = "user"

    @property
    def allows(self) -> bool:
        """Whether the call runs."""
        return self.choice != "deny"


ApproveFn = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer]]
"""Ask a person to approve a call and return the answer (raise ``TimeoutError`` for none)."""


_SPELLINGS: dict[str, Choice] = {
    **{label: choice for choice, label in CHOICE_LABELS.items()},
    **{choice: choice for choice in CHOICE_LABELS},
    "allow-once": "allow_once",
    "allow-always": "allow_always",
    "allow": "allow_once",
    "once": "allow_once",
    "always": "allow_always",
    "yes": "allow_once",
    "y": "allow_once",
    "no": "deny",
    "n": "deny",
}


def answer_from_text(text: str, offered: Sequence[Choice], *, by: str = "user") -> ApprovalAnswer:
    """Read a text answer: a choice's words or number, or ``deny: REASON``.

    Anything else is a denial whose reason is the text itself (the person said something
    other than yes: the model reads it), so an unclear answer never runs the call.
    """
    said = text.strip()
    head, _, rest = said.partition(":")
    words = head.strip().casefold()
    if words.isascii() and words.isdigit() and 1 <= int(words) <= len(offered):
        choice: Choice | None = offered[int(words) - 1]
    else:
        choice = _SPELLINGS.get(words)
    if choice is not None and choice in offered:
        reason = rest.strip() if choice == "deny" else ""
        return ApprovalAnswer(choice, reason, by)
    return ApprovalAnswer("deny", said, by)


def offered_choices(
    tool: str, arguments: Mapping[str, Any], workspace: Path, toolset: str | None = None
) -> tuple[Choice, ...]:
    """The choices a request for this call offers (no "allow always" without a rule to keep)."""
    if allow_rules_for(tool, arguments, workspace, toolset):
        return ("allow_once", "allow_always", "deny")
    return ("allow_once", "deny")


ClarifyLike = Callable[[str, Sequence[str] | None], Awaitable[str]]


def approve_by_clarify(clarify: ClarifyLike) -> ApproveFn:
    """An ``ApproveFn`` that asks through a plain clarify callback (question and choices)."""

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        labels = [CHOICE_LABELS[choice] for choice in request.choices]
        answer = await clarify(request.question(), labels)
        return answer_from_text(answer, request.choices)

    return approve


def preview_arguments(arguments: Mapping[str, Any]) -> str:
    """A call's arguments as indented JSON (what a person reads for a tool with no preview)."""
    return json.dumps(dict(arguments), indent=2, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Denial:
    """A call that did not run because it was denied, as a run's result lists it.

    Attributes:
        call_id: the call's id.
        tool: the tool's name.
        arguments: its arguments (decoded).
        reason: why: the rule or mode, or the person's words.
        by: who denied it: ``rule``, ``mode``, ``user``, ``no one to ask``, ``timeout``.
    """

    call_id: str
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    reason: str = ""
    by: str = ""
