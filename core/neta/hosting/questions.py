"""Questions waiting for a user's answer, kept process-wide and keyed by an unguessable id.

A question is a clarify question (its answer is text) or an approval of a tool call (its
answer is an ``ApprovalAnswer``; an answer in words is read as one). A question belongs to the
session that asked it; only that session may answer. Every change
of state happens here and synchronously, so whichever comes first (an answer, the timeout, a
cancel) wins and the others find the question closed. A closed question leaves a small
tombstone (its session and how it ended; not its text or answer) for a while, so that a
duplicate answer gets ``already_resolved`` and a late one ``expired`` instead of
``unknown_request``. An answer from another session gets ``unknown_request``, as for an id
nobody asked: whether another session's question exists is not told, on any worker.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal

from neta.errors import AnswerRefused, quoted_id
from neta.permissions import ApprovalAnswer, Choice, answer_from_text

State = Literal["pending", "answered", "timed_out", "cancelled", "server_restarted"]
Closing = Literal["timed_out", "cancelled", "server_restarted"]

_REMEMBERED = 10_000  # tombstones kept to tell duplicates and late answers apart


Answer = str | ApprovalAnswer
"""What a question gets: text for a clarify question, an ``ApprovalAnswer`` for an approval."""


@dataclass
class Question:
    """One question: who asked it, what it says, and the future its asker awaits.

    The future's result is the answer, or ``None`` when the question timed out; it is
    cancelled when the question is. ``approval`` is the request's JSON when the question is
    an approval (``offered`` then lists the choices it takes).
    """

    request_id: str
    session_id: str
    question: str
    choices: list[str] | None
    future: asyncio.Future[Answer | None] = field(repr=False)
    state: State = "pending"
    approval: dict[str, Any] | None = None
    offered: tuple[Choice, ...] = ()

    def public(self) -> dict[str, object]:
        """The question as sent to clients."""
        return {"requestId": self.request_id, "question": self.question, "choices": self.choices}


class QuestionRegistry:
    """Every pending question of the process, by request id."""

    def __init__(self) -> None:
        self._pending: dict[str, Question] = {}
        self._closed: OrderedDict[str, tuple[str, State]] = OrderedDict()

    def ask(
        self,
        session_id: str,
        question: str,
        choices: list[str] | None,
        request_id: str | None = None,
        *,
        offered: tuple[Choice, ...] = (),
    ) -> Question:
        """Register a new pending question of ``session_id``.

        With ``offered``, the question is an approval taking those choices (the caller sets
        its ``approval`` JSON, which names the question's id).
        """
        loop = asyncio.get_running_loop()
        asked = Question(
            request_id=request_id or secrets.token_urlsafe(18),
            session_id=session_id,
            question=question,
            choices=choices,
            future=loop.create_future(),
            offered=offered,
        )
        self._pending[asked.request_id] = asked
        return asked

    def knows(self, request_id: str) -> bool:
        """Whether ``request_id`` is a question asked here (pending, or closed not long ago)."""
        return request_id in self._pending or request_id in self._closed

    def pending_count(self) -> int:
        """How many questions wait for their answer, of every session."""
        return len(self._pending)

    def pending_for(self, session_id: str) -> list[Question]:
        """The questions ``session_id`` is waiting on, oldest first."""
        return [q for q in self._pending.values() if q.session_id == session_id]

    def answer(self, request_id: str, session_id: str, answer: Answer) -> Question:
        """Deliver ``answer`` from a connection of ``session_id``.

        An approval answered in words gets the ``ApprovalAnswer`` they say
        (``answer_from_text``: words that are no choice deny the call, and the model reads them).

        Raises:
            AnswerRefused: ``unknown_request`` (no such question, or another session's: it
                stays pending), ``already_resolved``, ``expired`` or ``invalid_answer`` (an
                empty answer, a choice not offered, a choice for a question that is no
                approval).
        """
        asked = self._pending.get(request_id)
        if asked is not None and asked.future.done():
            # its asker was cancelled and has not yet said so: the question is over
            self.close(asked, "cancelled")
            asked = None
        if asked is None:
            closed = self._closed.get(request_id)
            if closed is None or closed[0] != session_id:
                raise _unknown(request_id)
            state = closed[1]
            if state == "answered":
                raise AnswerRefused("this question was already answered", code="already_resolved")
            if state == "server_restarted":
                message = "the server restarted before this question was answered"
                raise AnswerRefused(message, code="expired")
            raise AnswerRefused(f"this question is closed ({state})", code="expired")
        if asked.session_id != session_id:
            raise _unknown(request_id)
        given = _checked(asked, answer)
        self._retire(asked, "answered")
        asked.future.set_result(given)
        return asked

    def close(self, asked: Question, state: Closing) -> bool:
        """End a pending question without an answer; whether it was still pending."""
        if asked.state != "pending":
            return False
        self._retire(asked, state)
        if not asked.future.done():
            if state == "timed_out":
                asked.future.set_result(None)
            else:
                asked.future.cancel()
        return True

    def _retire(self, asked: Question, state: State) -> None:
        asked.state = state
        self._pending.pop(asked.request_id, None)
        self.remember(asked.request_id, asked.session_id, state)

    def remember(self, request_id: str, session_id: str, state: State) -> None:
        """Keep the tombstone of a closed question (one closed elsewhere, or before a restart)."""
        self._closed[request_id] = (session_id, state)
        while len(self._closed) > _REMEMBERED:
            self._closed.popitem(last=False)

    def forget_session(self, session_id: str) -> list[Question]:
        """Cancel every pending question of a session that ends and drop its tombstones.

        Returns the questions that were still pending.
        """
        ended = self.pending_for(session_id)
        for asked in ended:
            self.close(asked, "cancelled")
        for request_id in [r for r, (owner, _) in self._closed.items() if owner == session_id]:
            del self._closed[request_id]
        return ended

    def remembered(self) -> int:
        """How many closed questions are remembered."""
        return len(self._closed)

    def __len__(self) -> int:
        return len(self._pending)


def _unknown(request_id: str) -> AnswerRefused:
    """The refusal of an answer to a question the answering session never asked."""
    return AnswerRefused(f"no question has id {quoted_id(request_id)}", code="unknown_request")


def _checked(asked: Question, answer: Answer) -> Answer:
    """``answer`` as ``asked`` takes it.

    Raises:
        AnswerRefused: ``invalid_answer``.
    """
    if isinstance(answer, str):
        if not answer.strip():
            raise AnswerRefused("the answer is empty", code="invalid_answer")
        return answer_from_text(answer, asked.offered) if asked.offered else answer
    if not asked.offered:
        message = "this question is no approval: answer it with clarify_response"
        raise AnswerRefused(message, code="invalid_answer")
    if answer.choice not in asked.offered:
        offered = ", ".join(asked.offered)
        message = f"{answer.choice!r} is not offered for this call (offered: {offered})"
        raise AnswerRefused(message, code="invalid_answer")
    return answer
