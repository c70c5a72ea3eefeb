"""The clarify bridge: a session's questions go out to its clients, their answers come back.

The clarify tool of a gateway session awaits the function ``ClarifyBridge.clarify_for`` makes.
It registers the question (process-wide, bound to the session), saves it, announces it with a
``clarify_request`` event and waits for ``answer`` or the timeout; every way it ends is told to
the session's clients with one ``clarify_resolved`` frame.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence

from neta.errors import HostError, StorageUnavailable
from neta.events import ClarifyRequest
from neta.hosting.live import LiveSession
from neta.hosting.protocol import ClarifyResolved, PendingQuestion, ResolvedOutcome, frame
from neta.hosting.questions import Closing, Question, QuestionRegistry
from neta.hosting.store import Store, StoredQuestion
from neta.messages import INTERRUPTED, Message
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


def note_lost_questions(history: list[Message], lost: Sequence[StoredQuestion]) -> int:
    """Give the calls left without a result at the end of ``history`` the restart note.

    A call the stopping run already closed with the generic "interrupted" result gets the
    note in its place. Changes ``history`` in place; returns how many results were written.
    """
    asking = next(
        (i for i in range(len(history) - 1, -1, -1) if history[i].role == "assistant"), None
    )
    if asking is None or not history[asking].tool_calls:
        return 0
    questions = " ".join(repr(q.question) for q in lost)
    note = RESTART_NOTE.format(questions=questions)
    # The run was cancelled as the server stopped, which gave its open calls the generic
    # "interrupted" result: this note says more, so it takes that result's place.
    replaced = 0
    for index in range(asking + 1, len(history)):
        message = history[index]
        if message.role == "tool" and message.content == INTERRUPTED:
            history[index] = message.model_copy(update={"content": note})
            replaced += 1
    answered = {m.tool_call_id for m in history[asking + 1 :] if m.role == "tool"}
    added = [
        Message(role="tool", content=note, tool_call_id=call.id, name=call.name)
        for call in history[asking].tool_calls
        if call.id not in answered
    ]
    history.extend(added)
    return replaced + len(added)


class ClarifyBridge:
    """Carries the clarify questions of a host's sessions to their clients and back.

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
            expiry = asyncio.get_running_loop().call_later(
                self.timeout, self.settle, live, asked, "timed_out"
            )
            announced = False
            try:
                if not live.closed:
                    stored = StoredQuestion(
                        asked.request_id, live.session_id, question, asked.choices
                    )
                    try:
                        await self.store.run_calls().add_question(stored)
                    except StorageUnavailable as exc:
                        self._fail(live, exc)  # the run stops; the model is not told
                        raise
                await self._save(live)
                live.session.dispatch(
                    ClarifyRequest(
                        request_id=asked.request_id, question=question, choices=asked.choices
                    )
                )
                announced = True
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
            if answer is None:
                raise TimeoutError(TIMEOUT_TEXT)
            return answer

        return clarify

    def answer(self, live: LiveSession, request_id: str, answer: str) -> None:
        """Deliver a client's answer to a question of ``live``'s session.

        Raises:
            AnswerRefused: see ``QuestionRegistry.answer``.
        """
        asked = self.questions.answer(request_id, live.session_id, answer)
        self.announce(live, asked.request_id, "answered")

    def settle(self, live: LiveSession, asked: Question, outcome: Closing) -> None:
        """End ``asked`` without an answer, and say so, unless it already ended."""
        if self.questions.close(asked, outcome):
            self.announce(live, asked.request_id, outcome)

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
            self.announce(live, lost.request_id, "server_restarted")

    def forget(self, live: LiveSession) -> None:
        """Cancel the questions of a session that ends, and forget its closed ones."""
        for asked in self.questions.forget_session(live.session_id):
            self.announce(live, asked.request_id, "cancelled")

    @staticmethod
    def announce(live: LiveSession, request_id: str, outcome: ResolvedOutcome) -> None:
        """Tell the session's clients that question ``request_id`` is over."""
        resolved = ClarifyResolved(request_id=request_id, outcome=outcome)
        live.publish(frame("clarify_resolved", live.session_id, resolved))

    def pending(self, session_id: str) -> list[PendingQuestion]:
        """The session's unanswered questions, as sent in ``session_ready``."""
        return [
            PendingQuestion(request_id=q.request_id, question=q.question, choices=q.choices)
            for q in self.questions.pending_for(session_id)
        ]
