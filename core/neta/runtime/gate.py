"""The gate every tool call passes before it runs: allowed, denied, or a person is asked.

The session's ``Policy`` decides (``neta.permissions``). An ``ask`` goes to whoever the
session can ask: its ``approve`` callback (a terminal, a WebSocket client, an MCP client, a
crew parent), else its ``clarify`` callback as a question with choices. A session that
answers in the next message (REST) leaves the call pending and ends the run; one with
nobody to ask gets a denial that tells the model why. Every decision is an event
(``permission_decision``) and is kept with the call's result in the history.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from neta.errors import ConfigError
from neta.events import PermissionDecided
from neta.permissions import (
    ApprovalAnswer,
    ApprovalRequest,
    ApprovalStore,
    ApproveFn,
    Decision,
    Denial,
    Policy,
    allow_rules_for,
    approve_by_clarify,
    effect_of,
    preview_arguments,
)
from neta.session import EventSink, SessionContext
from neta.session_tools import BoundTool
from neta.tools import ToolCall, ToolResult

DEFAULT_APPROVAL_TIMEOUT = 300.0
"""Seconds a person has to answer an approval when the session sets no ``clarify_timeout``."""

NOBODY_TO_ASK = (
    "not run: {reason}, and no one can be asked here to approve it. Do not try to get the "
    "same effect another way; tell the user what you wanted to do and why, so they can "
    "allow it (for example with --allow or --mode)."
)
COULD_NOT_ASK = "not run: the user could not be asked: {reason}"
TIMED_OUT = "not run: the user did not answer the request to approve it in time."
DENIED = "not run: the user denied it."
DENIED_BECAUSE = "not run: the user denied it: {reason}"
RULE_DENIED = "not run: {reason}."


class Gate:
    """Decides the tool calls of one run of a session.

    Args:
        policy: builds the session's policy (called again after an "allow always").
        context: the session's context (workspace, callbacks, timeout).
        emit: where decisions and requests go.
        agent_id: the crew child's id, ``None`` for the top-level agent.
        answers: answers given in advance, by call id (a REST client resuming a run).
        store: where "allow always" answers are kept.
        asking: held while a person is asked (the session's, so its crew children's
            questions wait their turn too).
    """

    def __init__(
        self,
        policy: Callable[[], Policy],
        context: SessionContext,
        emit: EventSink,
        *,
        agent_id: str | None = None,
        answers: Mapping[str, ApprovalAnswer] | None = None,
        store: ApprovalStore | None = None,
        asking: asyncio.Lock | None = None,
    ) -> None:
        self._build_policy = policy
        self.policy = policy()
        self.context = context
        self._emit = emit
        self.agent_id = agent_id
        self._answers = dict(answers or {})
        self._store = store or ApprovalStore()
        self._asking = asking or asyncio.Lock()  # one question at a time, in the order asked
        self.decided: dict[str, dict[str, Any]] = {}
        """Each decided call's record, by call id (kept with its result in the history)."""
        self.pending: list[ApprovalRequest] = []
        """Calls left for the next message to approve (a session that asks so)."""
        self.denials: list[Denial] = []

    def forget_answers(self) -> None:
        """Drop the answers given in advance: they were for the calls resumed, and no other."""
        self._answers.clear()

    async def check(self, call: ToolCall, bound: BoundTool, args: object) -> ToolResult | None:
        """``None`` when the call may run; otherwise the result the model reads instead."""
        answer = self._answers.pop(call.id, None)  # spent on this call whatever is decided
        try:
            return await self._check(call, bound, args, answer)
        except Exception as exc:  # a fault in the check never lets the call run
            decision = Decision("deny", (), f"the permission check failed: {exc}")
            message = f"not run: the permission check failed ({type(exc).__name__}: {exc})."
            return self._deny(call, _arguments(args), "rule", decision, message)

    async def _check(
        self, call: ToolCall, bound: BoundTool, args: object, answer: ApprovalAnswer | None
    ) -> ToolResult | None:
        arguments = _arguments(args)
        schema = bound.schema
        effect = effect_of(schema.effect)
        # on the loop, so that a turn's decisions come in the order of its calls; a line's
        # reading is bounded (neta.permissions: a pathological line is unreadable, not slow)
        decision = self.policy.decide(
            schema.name,
            toolset=schema.toolset,
            effect=effect,
            arguments=arguments,
            workspace=self.context.workspace,
        )
        by = "rule" if decision.rules else "mode"
        if decision.action == "allow":
            self._record(call, "allow", by, decision)
            return None
        if decision.action == "deny":
            return self._deny(
                call, arguments, by, decision, RULE_DENIED.format(reason=decision.reason)
            )
        request = ApprovalRequest(
            request_id=call.id,
            tool=schema.name,
            toolset=schema.toolset,
            effect=effect,
            arguments=arguments,
            preview=await _preview(bound, args, arguments),
            reason=decision.reason,
            always=allow_rules_for(schema.name, arguments, self.context.workspace, schema.toolset),
            agent_id=self.agent_id,
            call_id=call.id,
        )
        if answer is None:
            asker = self._asker()
            if asker is None:
                if self.context.defer_approvals:  # the loop names and announces it (its id)
                    self.pending.append(request)
                    return ToolResult(request.question(), end_turn=True)
                message = NOBODY_TO_ASK.format(reason=decision.reason)
                return self._deny(call, arguments, "no one to ask", decision, message)
            try:
                async with self._asking:
                    answer = await asyncio.wait_for(asker(request), self._timeout())
            except TimeoutError:
                return self._deny(call, arguments, "timeout", decision, TIMED_OUT)
            except Exception as exc:  # the channel failed (a client gone): nothing runs
                message = COULD_NOT_ASK.format(reason=f"{type(exc).__name__}: {exc}")
                return self._deny(call, arguments, "no one to ask", decision, message)
        if not answer.allows:
            reason = answer.reason.strip()
            message = DENIED_BECAUSE.format(reason=reason) if reason else DENIED
            return self._deny(call, arguments, answer.by, decision, message, said=reason)
        if answer.choice == "allow_always" and request.always:
            self._keep(request.always)
        self._record(call, "allow", answer.by, decision, said=answer.choice.replace("_", " "))
        return None

    def _asker(self) -> ApproveFn | None:
        if self.context.approve is not None:
            return self.context.approve
        if self.context.clarify is not None:
            return approve_by_clarify(self.context.clarify)
        return None

    def _timeout(self) -> float:
        return self.context.clarify_timeout or DEFAULT_APPROVAL_TIMEOUT

    def _keep(self, rules: tuple[str, ...]) -> None:
        for rule in rules:
            try:
                self._store.add(self.context.workspace, rule)
            except ConfigError:  # the store cannot be written: the answer still holds now
                continue
        try:
            self.policy = self._build_policy()
        except ConfigError:
            return

    def _deny(
        self,
        call: ToolCall,
        arguments: Mapping[str, Any],
        by: str,
        decision: Decision,
        message: str,
        *,
        said: str = "",
    ) -> ToolResult:
        self._record(call, "deny", by, decision, said=said)
        self.denials.append(
            Denial(call.id, call.name, dict(arguments), said or decision.reason, by)
        )
        return ToolResult(content=f"Error: {message}", is_error=True)

    def _record(
        self, call: ToolCall, action: str, by: str, decision: Decision, *, said: str = ""
    ) -> None:
        rule = decision.rule
        rule_text = f"{rule.text} from {rule.source}" if rule is not None else ""
        reason = decision.reason if by in {"rule", "mode"} else (said or decision.reason)
        at = time.time()
        self.decided[call.id] = {
            "action": action,
            "decided_by": by,
            "rule": rule_text,
            "reason": reason,
            "at": at,
        }
        self._emit(
            PermissionDecided(
                call_id=call.id,
                name=call.name,
                action="allow" if action == "allow" else "deny",
                decided_by=by,
                rule=rule_text,
                reason=reason,
                at=at,
            )
        )


def _arguments(args: object) -> dict[str, Any]:
    if isinstance(args, BaseModel):
        return args.model_dump(mode="json")
    if isinstance(args, Mapping):
        return dict(args)
    return {}


async def _preview(bound: BoundTool, args: object, arguments: Mapping[str, Any]) -> str:
    """What the call would do, for a person to read: the tool's own preview if it has one."""
    preview = bound.tool.preview
    if preview is None:
        return preview_arguments(arguments)
    try:
        if inspect.iscoroutinefunction(preview):
            shown = await preview(args)
        else:
            shown = await asyncio.to_thread(preview, args)
    except Exception as exc:  # the edit would fail: the person sees why, the call still asks
        return f"{preview_arguments(arguments)}\n(no preview: {exc})"
    return str(shown)
