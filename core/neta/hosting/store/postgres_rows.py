"""The rows of the PostgreSQL store, to and from Python: shared by its engine and run calls."""

from __future__ import annotations

import json
from typing import Any

from neta.hosting.store import StoredQuestion, StoredSession
from neta.messages import Message

Row = tuple[Any, ...]


def question_of(row: Row) -> StoredQuestion:
    """A ``pending_clarify`` or ``lost_clarify`` row as a question."""
    request_id, session_id, text, choices, _, approval = row[:6]
    return StoredQuestion(
        request_id,
        session_id,
        text,
        None if choices is None else json.loads(choices),
        None if approval is None else json.loads(approval),
    )


def question_row(question: StoredQuestion) -> Row:
    """The parameters of ``ADD_QUESTION`` for ``question``."""
    choices = None if question.choices is None else json.dumps(question.choices)
    approval = None if question.approval is None else json.dumps(question.approval)
    return (question.request_id, question.session_id, question.question, choices, approval)


def save_params(
    session_id: str, messages: list[Message], owner: str, start: int, todos: str | None
) -> dict[str, Any]:
    """The parameters of ``SAVE``."""
    return {
        "sid": session_id,
        "owner": owner,
        "start": start,
        "end": start + len(messages),
        "bodies": [m.model_dump_json() for m in messages],
        "todos": todos,
    }


def session_of(session_id: str, row: Row) -> StoredSession:
    """The session a ``LOAD`` row holds."""
    entry, version, bodies, todos = row
    history = [Message.model_validate_json(body) for body in bodies]
    return StoredSession(session_id, entry, history, todos, version=int(version))
