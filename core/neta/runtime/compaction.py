"""Compacting a long history: old turns become one note that keeps the open todo items."""

from __future__ import annotations

from collections.abc import Sequence

from neta.errors import ConfigError
from neta.messages import Message
from neta.todos import TodoSnapshot, TodoStore
from neta.truncation import one_line

NOTE_HEADER = "[Earlier conversation compacted]"
"""The first line of every compaction note (so a later compaction can recognise one)."""

_REQUESTS_HEADER = "Requests the user made in those turns (oldest first):"
_TODOS_HEADER = "Open todo items (in progress and pending), still to be done:"
_NO_TODOS = "The todo list has no open items."
_MAX_REQUESTS = 20
_REQUEST_CHARS = 200


def compact_history(
    history: Sequence[Message], *, keep_last: int, todo_store: TodoStore | None
) -> list[Message]:
    """``history`` with all but its last ``keep_last`` messages replaced by one ``user`` note.

    The kept part always starts at a user message, so an assistant message that calls tools
    is never separated from the tool results that answer it: the cut moves earlier to the
    closest user message (one more when that message answers a turn that ended on a tool
    result), or, when there is none before it, later. When no such cut removes
    anything, the history is returned as it was (as a new list).

    When the newest user message starts a run longer than ``keep_last`` (compaction between
    the turns of one run), that message is kept as it is, right after the note, and the
    run's older turns are cut before an assistant message instead.

    The note says that earlier turns were compacted, lists the user's requests from them
    briefly, and lists only the todo items still pending or in progress (completed and
    cancelled ones are left out); without a ``todo_store`` it has no todo section.

    Raises:
        ConfigError: ``keep_last`` is less than 1.
    """
    if keep_last < 1:
        raise ConfigError(f"keep_last must be at least 1, not {keep_last}")
    target = len(history) - keep_last
    snapshot = todo_store.snapshot() if todo_store is not None else None
    within = _cut_within_run(history, target)
    if within is not None:
        request, start = within
        removed = [*history[:request], *history[request + 1 : start]]
        note = Message(role="user", content=_note(removed, snapshot))
        return [note, history[request], *history[start:]]
    cut = _cut_index(history, target)
    if cut is None:
        return list(history)
    return [Message(role="user", content=_note(history[:cut], snapshot)), *history[cut:]]


def _cut_within_run(history: Sequence[Message], target: int) -> tuple[int, int] | None:
    """For a run longer than what is kept: its request and the assistant message to keep from.

    Between the turns of one long run the newest user message is the run's request, and
    ``target`` falls after it. The request is kept word for word; the run's older turns go
    into the note, cut just before an assistant message (never between a call and its
    result): the closest at or before ``target``, or else the first after it.
    """
    request = next((i for i in range(len(history) - 1, -1, -1) if history[i].role == "user"), None)
    if request is None or target <= request + 1:
        return None
    starts = [i for i in range(request + 2, len(history)) if history[i].role == "assistant"]
    before = [i for i in starts if i <= target]
    if before:
        return request, before[-1]
    after = [i for i in starts if i > target]
    return (request, after[0]) if after else None


def _cut_index(history: Sequence[Message], target: int) -> int | None:
    """Where the kept part starts: a user message at ``target`` or the closest to it.

    A user message that follows a tool result replies to a turn that ended waiting for the
    user (a question asked without a live channel, say); the cut then moves back one more
    user message, so the question stays with its answer.
    """
    if target <= 0:
        return None
    starts = [i for i, message in enumerate(history) if i > 0 and message.role == "user"]
    before = [i for i in starts if i <= target]
    if before:
        if history[before[-1] - 1].role == "tool" and len(before) > 1:
            return before[-2]
        return before[-1]
    after = [i for i in starts if i > target]
    return after[0] if after else None


def _note(removed: Sequence[Message], snapshot: TodoSnapshot | None) -> str:
    lines = [
        NOTE_HEADER,
        f"{len(removed)} earlier messages of this conversation were removed to save space. "
        "Continue from the messages that follow; do not redo finished work.",
    ]
    requests = _requests(removed)
    if requests:
        shown = requests[-_MAX_REQUESTS:]
        lines += ["", _REQUESTS_HEADER]
        if len(requests) > len(shown):
            lines.append(f"- ({len(requests) - len(shown)} older requests not listed)")
        lines += [f"- {request}" for request in shown]
    if snapshot is not None:
        open_items = snapshot.open_items
        lines.append("")
        if open_items:
            lines.append(_TODOS_HEADER)
            lines += [f"- [{item.status}] {item.id}: {item.content}" for item in open_items]
        else:
            lines.append(_NO_TODOS)
    return "\n".join(lines)


def _requests(messages: Sequence[Message]) -> list[str]:
    """One short line per user message; an earlier note contributes the requests it listed."""
    found: list[str] = []
    for message in messages:
        if message.role != "user" or not message.content:
            continue
        if message.content.startswith(NOTE_HEADER):
            found += _requests_of_note(message.content)
        else:
            found.append(one_line(message.content, _REQUEST_CHARS))
    return found


def _requests_of_note(note: str) -> list[str]:
    lines = note.splitlines()
    if _REQUESTS_HEADER not in lines:
        return []
    found = []
    for line in lines[lines.index(_REQUESTS_HEADER) + 1 :]:
        if not line.startswith("- "):
            break
        if not line.startswith("- (") or not line.endswith("requests not listed)"):
            found.append(line[2:])
    return found
