"""The clarify bridge: a session's questions go out to its clients, their answers come back.

The clarify tool of a gateway session awaits the function ``ClarifyBridge.clarify_for`` makes;
its permission gate awaits the one ``ClarifyBridge.approve_for`` makes when a tool call needs
a person's approval. Either registers the question (process-wide, bound to the session), saves
it, announces it (a ``clarify_request`` event, or an ``approval_request`` carrying the call,
its preview and the choices) and waits for ``answer`` or the timeout; every way it ends is told
to the session's clients with one ``clarify_resolved`` (``approval_resolved``) frame. A question
that cannot be saved, or announced (the bus of several workers is unreachable), stops the run
with an error its clients are told: no question times out unseen, leaving the model to decide.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from neta.errors import HostError, StorageUnavailable
from neta.events import ApprovalRequested, ClarifyRequest, Event
from neta.hosting.live import LiveSession
from neta.hosting.protocol import (
    PendingQuestion,
    ResolvedOutcome,
    approval_payload,
    resolved_frame,
)
from neta.hosting.questions import Answer, Closing, Question, QuestionRegistry
from neta.hosting.store import Store, StoredQuestion
from neta.messages import INTERRUPTED, Message
from neta.permissions import (
    CHOICE_LABELS,
    ApprovalAnswer,
    ApprovalRequest,
    ApproveFn,
    Choice,
    answer_from_text,
)
from neta.session import ClarifyFn

TIMEOUT_TEXT = (
    "The user did not answer in time. Decide for yourself from what you know and continue."
)

RESTART_NOTE = (
    "The server restarted while this call waited for the user's answer to: {questions} "
    "It was never answered. If the user's next message answers it, use that answer; "
    "otherwise ask again if you still need to know."
)
"""The result a call gets when the server restarted while its question waited."""

APPROVAL_TIMEOUT_TEXT = "The user did not answer the request to approve this call in time."

APPROVAL_RESTART_NOTE = (
    "Error: not run: the server restarted while this call waited for the user's approval. "
    "If it is still needed, call the tool again (the user will be asked again)."
)
"""The result a call gets when the server restarted while it waited for approval."""


def note_lost_questions(history: list[Message], lost: Sequence[StoredQuestion]) -> int:
    """Give the calls left without a result at the end of ``history`` the restart note.

    A call the stopping run already closed with the generic "interrupted" result gets the
    note in its place. A call that waited for approval did not run, and its note says so (as
    does every call's when only approvals were lost). Changes ``history`` in place; returns
    how many results were written.
    """
    asking = next(
        (i for i in range(len(history) - 1, -1, -1) if history[i].role == "assistant"), None
    )
    if asking is None or not history[asking].tool_calls:
        return 0
    clarified = [q for q in lost if q.approval is None]
    approved = {str(q.approval.get("callId")) for q in lost if q.approval is not None}
    asked = RESTART_NOTE.format(questions=" ".join(repr(q.question) for q in clarified))

    def noted(call_id: str | None, name: str | None) -> Message:
        if call_id in approved or not clarified:
            return Message(
                role="tool",
                content=APPROVAL_RESTART_NOTE,
                tool_call_id=call_id,
                name=name,
                is_error=True,
            )
        return Message(role="tool", content=asked, tool_call_id=call_id, name=name)

    # The run was cancelled as the server stopped, which gave its open calls the generic
    # "interrupted" result: this note says more, so it takes that result's place.
    replaced = 0
    for index in range(asking + 1, len(history)):
        message = history[index]
        if message.role == "tool" and message.content == INTERRUPTED:
            history[index] = noted(message.tool_call_id, message.name)
            replaced += 1
    answered = {m.tool_call_id for m in history[asking + 1 :] if m.role == "tool"}
    added = [
        noted(call.id, call.name) for call in history[asking].tool_calls if call.id not in answered
    ]
    history.extend(added)
    return replaced + len(added)


class ClarifyBridge:
    """Carries the clarify questions and approvals of a host's sessions to their clients and back.

    Args:
        questions: the process's pending questions.
        store: where questions are saved while they wait.
        timeout: seconds a question waits for its answer.
        save: saves a session's history (awaited before a question is announced).
        fail: stops a session's run that cannot be saved and tells its clients.
    """

    def __init__(
        self,
        questions: QuestionRegistry,
        store: Store,
        timeout: float,
        save: Callable[[LiveSession], Awaitable[None]],
        fail: Callable[[LiveSession, HostError], None],
    ) -> None:
        self.questions = questions
        self.store = store
        self.timeout = timeout
        self._save = save
        self._fail = fail

    def clarify_for(self, holder: list[LiveSession]) -> ClarifyFn:
        """The clarify function of the session ``holder[0]`` (filled once the session exists)."""

        async def clarify(question: str, choices: Sequence[str] | None) -> str:
            """Ask the session's clients; raise ``TimeoutError`` when nobody answers in time."""
            live = holder[0]
            asked = self.questions.ask(
                live.session_id, question, list(choices) if choices else None
            )
            request = ClarifyRequest(
                request_id=asked.request_id, question=question, choices=asked.choices
            )
            answer = await self._wait(live, asked, request)
            if answer is None:
                raise TimeoutError(TIMEOUT_TEXT)
            return answer if isinstance(answer, str) else answer.choice

        return clarify

    def approve_for(self, holder: list[LiveSession]) -> ApproveFn:
        """The approve function of the session ``holder[0]`` (its permission gate asks it).

        The approval is a question of the session (only its clients may answer) whose text is
        the request's (``ApprovalRequest.question``: a restart notes it like a question) and
        whose ``approval`` is the request's JSON: the ``approval_request`` frame, and the
        ``pendingApprovals`` of a client that reconnects, carry it.
        """

        async def approve(request: ApprovalRequest) -> ApprovalAnswer:
            """Ask the session's clients; raise ``TimeoutError`` when nobody answers in time."""
            live = holder[0]
            labels = [CHOICE_LABELS[choice] for choice in request.choices]
            asked = self.questions.ask(
                live.session_id, request.question(), labels, offered=request.choices
            )
            asked.approval = approval_payload(request, asked.request_id)
            announced = ApprovalRequested(
                request_id=asked.request_id, approval=asked.approval, agent_id=request.agent_id
            )
            answer = await self._wait(live, asked, announced)
            if answer is None:
                raise TimeoutError(APPROVAL_TIMEOUT_TEXT)
            if isinstance(answer, str):  # the registry reads words as a choice; kept for safety
                return answer_from_text(answer, request.choices)
            return answer

        return approve

    async def _wait(self, live: LiveSession, asked: Question, announce: Event) -> Answer | None:
        """Save ``asked``, announce it, and wait: its answer, or ``None`` when it timed out."""
        expiry = asyncio.get_running_loop().call_later(
            self.timeout, self.settle, live, asked, "timed_out"
        )
        announced = False
        try:
            if not live.closed:
                stored = StoredQuestion(
                    asked.request_id, live.session_id, asked.question, asked.choices, asked.approval
                )
                try:
                    await self.store.run_calls().add_question(stored)
                except StorageUnavailable as exc:
                    self._fail(live, exc)  # the run stops; the model is not told
                    raise
            await self._save(live)
            live.session.dispatch(announce)
            announced = True
            try:
                await live.delivered()
            except StorageUnavailable as exc:  # nobody sees it: the model must not decide alone
                self._fail(live, exc)
                raise
            answer = await asked.future
        finally:
            expiry.cancel()
            # cancelled, or failed before it could wait: nobody may answer it any more
            if announced:
                self.settle(live, asked, "cancelled")
            else:
                self.questions.close(asked, "cancelled")
            if not live.closed:
                with contextlib.suppress(StorageUnavailable):
                    await self.store.run_calls().remove_question(asked.request_id)
        return answer

    def answer(self, live: LiveSession, request_id: str, answer: Answer) -> None:
        """Deliver a client's answer to a question or approval of ``live``'s session.

        Raises:
            AnswerRefused: see ``QuestionRegistry.answer``.
        """
        asked = self.questions.answer(request_id, live.session_id, answer)
        self.announce(live, asked, "answered")

    def settle(self, live: LiveSession, asked: Question, outcome: Closing) -> None:
        """End ``asked`` without an answer, and say so, unless it already ended."""
        if self.questions.close(asked, outcome):
            self.announce(live, asked, outcome)

    def cancel_pending(self, live: LiveSession) -> None:
        """Cancel every question the session waits on (its run is being stopped)."""
        for asked in self.questions.pending_for(live.session_id):
            self.settle(live, asked, "cancelled")

    def lose_pending(self, live: LiveSession) -> list[StoredQuestion]:
        """Keep the session's waiting questions as lost to a restart (the process stops).

        The questions end now (``server_restarted``); their sessions' clients are told again
        when they reconnect (``tell_lost``), and the caller notes them in the history.
        """
        asked = self.questions.pending_for(live.session_id)
        if not asked:
            return []
        lost = self.store.lose_questions([q.request_id for q in asked])
        for question in asked:
            self.settle(live, question, "server_restarted")
        return lost

    async def tell_lost(self, live: LiveSession) -> None:
        """Tell the session's clients about its questions a restart ended, once."""
        try:
            lost_questions = await self.store.run_calls().take_lost_questions(live.session_id)
        except StorageUnavailable:  # they stay lost; told at a later connection
            return
        for lost in lost_questions:
            self.questions.remember(lost.request_id, lost.session_id, "server_restarted")
            live.publish(lost_frame(lost))

    def forget(self, live: LiveSession) -> None:
        """Cancel the questions of a session that ends, and forget its closed ones."""
        for asked in self.questions.forget_session(live.session_id):
            self.announce(live, asked, "cancelled")

    @staticmethod
    def announce(live: LiveSession, asked: Question, outcome: ResolvedOutcome) -> None:
        """Tell the session's clients that ``asked`` is over (and, answered, how)."""
        choice = None
        if outcome == "answered" and asked.future.done() and not asked.future.cancelled():
            given = asked.future.result()
            choice = given.choice if isinstance(given, ApprovalAnswer) else None
        resolved = resolved_frame(
            live.session_id,
            asked.request_id,
            outcome,
            approval=asked.approval is not None,
            choice=choice,
        )
        live.publish(resolved)

    @staticmethod
    def announce_approval(
        live: LiveSession, request_id: str, outcome: ResolvedOutcome, choice: Choice | None
    ) -> None:
        """Tell the session's clients that an approval its last run left waiting is over."""
        live.publish(
            resolved_frame(live.session_id, request_id, outcome, approval=True, choice=choice)
        )

    def pending(self, session_id: str) -> list[PendingQuestion]:
        """The session's unanswered clarify questions, as sent in ``session_ready``."""
        return [
            PendingQuestion(request_id=q.request_id, question=q.question, choices=q.choices)
            for q in self.questions.pending_for(session_id)
            if q.approval is None
        ]

    def pending_approvals(self, session_id: str) -> list[dict[str, Any]]:
        """The session's unanswered approvals, as sent in ``session_ready``."""
        return [
            q.approval for q in self.questions.pending_for(session_id) if q.approval is not None
        ]


def lost_frame(lost: StoredQuestion) -> dict[str, Any]:
    """The frame telling a session's clients that a restart ended question ``lost``."""
    return resolved_frame(
        lost.session_id, lost.request_id, "server_restarted", approval=lost.approval is not None
    )
