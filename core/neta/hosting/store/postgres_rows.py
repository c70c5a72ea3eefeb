"""The rows of the PostgreSQL store, to and from Python: shared by its engine and run calls."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from neta.hosting.store import RunMark, StoredQuestion, StoredSession
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


def question_row(question: StoredQuestion) -> dict[str, Any]:
    """``question`` as ``ADD_QUESTION`` takes it (``questions_params``)."""
    choices = None if question.choices is None else json.dumps(question.choices)
    approval = None if question.approval is None else json.dumps(question.approval)
    return {
        "request_id": question.request_id,
        "session_id": question.session_id,
        "question": question.question,
        "choices": choices,
        "approval": approval,
    }


def questions_params(questions: list[dict[str, Any]]) -> tuple[str]:
    """The parameters of ``ADD_QUESTION`` for some ``question_row`` rows."""
    return (json.dumps(questions, ensure_ascii=False),)


def creates_params(sessions: list[tuple[str, str]]) -> tuple[str]:
    """The parameters of ``CREATE_SESSION`` for some ``(session id, entry)`` sessions."""
    return (json.dumps([{"id": sid, "entry": entry} for sid, entry in sessions]),)


def acquires_params(leases: list[tuple[str, str, float]]) -> tuple[str]:
    """The parameters of ``ACQUIRE`` for some ``(session id, owner, ttl)`` leases."""
    return (json.dumps([{"sid": sid, "owner": o, "ttl": ttl} for sid, o, ttl in leases]),)


def releases_params(leases: list[tuple[str, str]]) -> tuple[str]:
    """The parameters of ``RELEASE`` for some ``(session id, owner)`` leases."""
    return (json.dumps([{"sid": sid, "owner": owner} for sid, owner in leases]),)


@dataclass(frozen=True)
class SaveParams:
    """One session's save, as ``SAVE`` takes it with others' (``saves_params``)."""

    session_id: str
    save: dict[str, Any]
    messages: list[dict[str, Any]]


def save_params(
    session_id: str,
    messages: list[Message],
    owner: str,
    start: int,
    todos: str | None,
    run: RunMark | None = None,
) -> SaveParams:
    """A save of the session's history from position ``start`` on (``Store.save``).

    Raises:
        ValueError: the text is not valid Unicode (an unpaired surrogate): it cannot be stored.
    """
    bodies = [m.model_dump_json() for m in messages]
    for text in (*bodies, todos or ""):
        text.encode()  # here, not when several sessions' saves are sent together
    stop = start + len(messages)
    save = {"sid": session_id, "owner": owner, "stop": stop, "todos": todos, "run": run}
    rows = [{"sid": session_id, "seq": start + n, "body": b} for n, b in enumerate(bodies)]
    return SaveParams(session_id, save, rows)


def saves_params(saves: list[SaveParams]) -> dict[str, str]:
    """The parameters of ``SAVE`` for the saves of distinct sessions."""
    return {
        "saves": json.dumps([s.save for s in saves], ensure_ascii=False),
        "messages": json.dumps([m for s in saves for m in s.messages], ensure_ascii=False),
    }


def session_of(session_id: str, row: Row) -> StoredSession:
    """The session a ``LOAD`` row holds."""
    entry, version, bodies, todos, run_owner = row
    history = [Message.model_validate_json(body) for body in bodies]
    return StoredSession(
        session_id, entry, history, todos, version=int(version), run_owner=run_owner
    )
