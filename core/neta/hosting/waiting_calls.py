"""Tool calls a run left waiting for approval, as the session's history shows them.

A REST session's run does not wait for a person: a call that needs approval is left without
a result and the run ends (``awaiting_input``). The history, saved on every worker's reach,
is then all that says which calls wait; the next message answers them by the request id
each was asked under (``neta.messages.deferred_approval_id``: its reply's place and the
call itself, so an answer never fits a later call that reuses the model's call id).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from neta.errors import AnswerRefused, quoted_id
from neta.messages import Message, waiting_approvals


def check_waiting(
    history: Sequence[Message], request_ids: Iterable[str], *, with_text: bool = False
) -> None:
    """Refuse answers naming a call that does not wait for approval in ``history``.

    ``with_text``: the answers come with a message, which may follow only once no call waits.

    Raises:
        AnswerRefused: ``unknown_request``, naming the first such id and the calls that wait;
            ``invalid_answer`` when a message comes with answers that leave a call waiting.
    """
    waiting, given = list(waiting_approvals(history)), set(request_ids)
    unknown = sorted(given - set(waiting))
    if unknown:
        listed = f" (waiting: {', '.join(waiting)})" if waiting else " (none waits)"
        raise AnswerRefused(
            f"no tool call with id {quoted_id(unknown[0])} waits for approval in this session"
            f"{listed}",
            code="unknown_request",
        )
    if with_text and set(waiting) - given:
        raise AnswerRefused(
            "answer every call that waits for approval before sending a message "
            f"(waiting: {', '.join(waiting)})",
            code="invalid_answer",
        )
