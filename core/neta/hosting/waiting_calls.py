"""Tool calls a run left waiting for approval, as the session's history shows them.

A REST session's run does not wait for a person: a call that needs approval is left without
a result and the run ends (``awaiting_input``). The history, saved on every worker's reach,
is then all that says which calls wait; the next message answers them by id.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from neta.errors import AnswerRefused
from neta.messages import Message, waiting_calls


def check_waiting(history: Sequence[Message], request_ids: Iterable[str]) -> None:
    """Refuse answers naming a call that does not wait for approval in ``history``.

    Raises:
        AnswerRefused: ``unknown_request``, naming the first such id and the calls that wait.
    """
    waiting = [call.id for call in waiting_calls(history)]
    unknown = sorted(set(request_ids) - set(waiting))
    if unknown:
        listed = f" (waiting: {', '.join(waiting)})" if waiting else " (none waits)"
        raise AnswerRefused(
            f"no tool call with id {unknown[0]!r} waits for approval in this session{listed}",
            code="unknown_request",
        )
