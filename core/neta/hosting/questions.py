"""Questions waiting for a user's answer, kept process-wide and keyed by an unguessable id.

A question belongs to the session that asked it; only that session may answer. The first
answer wins. A resolved question is remembered for a while, so that a duplicate answer gets
``already_resolved`` and a late one ``expired`` instead of ``unknown_request``.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Literal

State = Literal["pending", "answered", "timed_out", "cancelled"]

_REMEMBERED = 10_000  # resolved questions kept to tell duplicates and late answers apart


class AnswerRefused(Exception):
    """An answer was not accepted; ``code`` is the error code sent to the client."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Question:
    """One question: who asked it, what it says, and the future its asker awaits."""

    request_id: str
    session_id: str
    question: str
    choices: list[str] | None
    future: asyncio.Future[str] = field(repr=False)
    state: State = "pending"

    def public(self) -> dict[str, object]:
        """The question as sent to clients."""
        return {"requestId": self.request_id, "question": self.question, "choices": self.choices}


class QuestionRegistry:
    """Every pending question of the process, by request id."""

    def __init__(self) -> None:
        self._pending: dict[str, Question] = {}
        self._resolved: OrderedDict[str, Question] = OrderedDict()

    def ask(
        self,
        session_id: str,
        question: str,
        choices: list[str] | None,
        request_id: str | None = None,
    ) -> Question:
        """Register a new pending question of ``session_id``."""
        loop = asyncio.get_running_loop()
        asked = Question(
            request_id=request_id or secrets.token_urlsafe(18),
            session_id=session_id,
            question=question,
            choices=choices,
            future=loop.create_future(),
        )
        self._pending[asked.request_id] = asked
        return asked

    def pending_for(self, session_id: str) -> list[Question]:
        """The questions ``session_id`` is waiting on, oldest first."""
        return [q for q in self._pending.values() if q.session_id == session_id]

    def answer(self, request_id: str, session_id: str, answer: str) -> Question:
        """Deliver ``answer`` from a connection of ``session_id``.

        Raises:
            AnswerRefused: ``unknown_request``, ``forbidden`` (another session's question; it
                stays pending), ``already_resolved``, ``expired`` or ``invalid_answer``.
        """
        asked = self._pending.get(request_id)
        if asked is None:
            done = self._resolved.get(request_id)
            if done is None:
                raise AnswerRefused("unknown_request", f"no question has id {request_id!r}")
            if done.session_id != session_id:
                raise AnswerRefused("forbidden", "this question belongs to another session")
            if done.state == "answered":
                raise AnswerRefused("already_resolved", "this question was already answered")
            raise AnswerRefused("expired", f"this question is closed ({done.state})")
        if asked.session_id != session_id:
            raise AnswerRefused("forbidden", "this question belongs to another session")
        if not answer.strip():
            raise AnswerRefused("invalid_answer", "the answer is empty")
        self._close(asked, "answered")
        asked.future.set_result(answer)
        return asked

    def close(self, asked: Question, state: State) -> None:
        """End a pending question without an answer (``timed_out`` or ``cancelled``)."""
        if asked.state == "pending":
            self._close(asked, state)
            if not asked.future.done():
                asked.future.cancel()

    def _close(self, asked: Question, state: State) -> None:
        asked.state = state
        self._pending.pop(asked.request_id, None)
        self._resolved[asked.request_id] = asked
        while len(self._resolved) > _REMEMBERED:
            self._resolved.popitem(last=False)

    def forget_session(self, session_id: str) -> list[Question]:
        """Cancel every pending question of a session that ends; return them."""
        ended = self.pending_for(session_id)
        for asked in ended:
            self.close(asked, "cancelled")
        for request_id in [r for r, q in self._resolved.items() if q.session_id == session_id]:
            del self._resolved[request_id]
        return ended

    def __len__(self) -> int:
        return len(self._pending)
