"""What of a model's reply the runtime stores: always a history the provider accepts.

A model may call a tool by a name the API refuses (``read file``, ``""``), reuse one call id
for several calls, make thousands of calls in one reply or write megabytes. Stored as received,
such a reply would make every later request fail; so before anything runs, the reply is made
valid and bounded, and each call that must not run gets an error result saying why.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from neta.catalog import TOOL_NAME_PATTERN
from neta.messages import Message
from neta.providers.base import ModelResponse
from neta.suggest import did_you_mean
from neta.tools import ToolCall
from neta.truncation import truncate_middle

DEFAULT_MAX_CALLS_PER_REPLY = 128
"""Tool calls of one reply that run; a reply that makes more is told so."""

DEFAULT_MAX_REPLY_CHARS = 1_000_000
"""Characters of one reply (text and arguments) the runtime accepts and stores."""

INVALID_NAME = "invalid_tool_name"
"""What a call whose name the API would refuse is stored as (its result names the original)."""

_VALID_NAME = re.compile(TOOL_NAME_PATTERN)
_NAME_RULE = "a tool name is 1 to 64 letters, digits, '_' or '-'"


@dataclass(frozen=True)
class CheckedReply:
    """A reply made fit to store and run.

    Attributes:
        message: the assistant message to store and re-send: valid names, unique ids, bounded.
        calls: the calls of ``message``, in order.
        refused: for each call that must not run, by call id, the error the model reads.
        note: why the stored reply differs from what the model sent, if it does (for a reply
            without calls, whose text was cut).
    """

    message: Message
    calls: list[ToolCall]
    refused: dict[str, str] = field(default_factory=dict)
    note: str = ""


def check_reply(
    response: ModelResponse,
    tool_names: Collection[str],
    *,
    max_calls: int = DEFAULT_MAX_CALLS_PER_REPLY,
    max_chars: int = DEFAULT_MAX_REPLY_CHARS,
) -> CheckedReply:
    """Make ``response`` valid to store and bounded, and say which calls must not run."""
    text = response.text
    raw = response.tool_calls
    size = len(text) + sum(len(c.arguments) + len(c.name) for c in raw)
    if size <= max_chars and len(raw) <= max_calls and _all_valid(raw):  # the usual case
        message = Message(role="assistant", content=text or None, tool_calls=raw)
        return CheckedReply(message, message.tool_calls)
    oversized = size > max_chars
    if oversized:
        text = truncate_middle(text, max_chars)
    calls: list[ToolCall] = []
    refused: dict[str, str] = {}
    seen: set[str] = set()
    for index, call in enumerate(raw[: max_calls + 1]):
        ident = _unique_id(call.id, seen)
        name = call.name if _VALID_NAME.match(call.name) else INVALID_NAME
        arguments = "{}" if oversized else call.arguments
        calls.append(ToolCall(id=ident, name=name, arguments=arguments))
        if oversized:
            refused[ident] = _too_large(size, max_chars)
        elif index == max_calls:
            refused[ident] = _too_many(len(raw), max_calls)
        elif name != call.name:
            refused[ident] = _invalid_name(call.name, tool_names)
    message = Message(role="assistant", content=text or None, tool_calls=calls)
    note = "" if raw or not oversized else _too_large(size, max_chars, cut=True)
    return CheckedReply(message, calls, refused, note)


def repair_history(history: list[Message]) -> int:
    """Make a stored history valid in place: call names the API accepts, unique call ids.

    For histories stored before the runtime checked replies (or given by a host): each
    assistant message with an invalid name or a reused or empty id gets the calls
    ``check_reply`` would have stored, and the tool messages that answer them (in order)
    follow the new ids. Returns how many assistant messages were repaired.
    """
    repaired = 0
    for index, message in enumerate(history):
        if message.role != "assistant" or _all_valid(message.tool_calls):
            continue
        seen: set[str] = set()
        calls = [
            ToolCall(
                id=_unique_id(call.id, seen),
                name=call.name if _VALID_NAME.match(call.name) else INVALID_NAME,
                arguments=call.arguments,
            )
            for call in message.tool_calls
        ]
        history[index] = message.model_copy(update={"tool_calls": calls})
        waiting: dict[str, list[ToolCall]] = {}
        for old, new in zip(message.tool_calls, calls, strict=True):
            waiting.setdefault(old.id, []).append(new)
        after = index + 1
        while after < len(history) and history[after].role == "tool":
            answered = waiting.get(history[after].tool_call_id or "")
            if answered:
                new = answered.pop(0)
                update = {"tool_call_id": new.id, "name": new.name}
                history[after] = history[after].model_copy(update=update)
            after += 1
        repaired += 1
    return repaired


def _all_valid(calls: Sequence[ToolCall]) -> bool:
    ids = {call.id for call in calls}
    return (
        len(ids) == len(calls)
        and "" not in ids
        and all(_VALID_NAME.match(call.name) for call in calls)
    )


def _unique_id(ident: str, seen: set[str]) -> str:
    if not ident:
        ident = f"call_{uuid.uuid4().hex[:24]}"
    unique, number = ident, 1
    while unique in seen:
        number += 1
        unique = f"{ident}_{number}"
    seen.add(unique)
    return unique


def _invalid_name(name: str, tool_names: Collection[str]) -> str:
    readable = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_")
    hint = did_you_mean(readable, tool_names) if readable else ""
    hint = f" {hint[:1].upper()}{hint[1:]}" if hint else ""
    listing = ", ".join(tool_names) if tool_names else "none"
    return (
        f"{name[:200]!r} is not a valid tool name ({_NAME_RULE}), so nothing ran.{hint} "
        f"Available tools: {listing}."
    )


def _too_many(made: int, allowed: int) -> str:
    return (
        f"not run: your reply made {made} tool calls, more than the {allowed} allowed in one "
        f"reply; the first {allowed} ran, this one and the {made - allowed - 1} after it did "
        "not (they are not kept). Make the remaining calls in later replies if still needed."
    )


def _too_large(size: int, allowed: int, *, cut: bool = False) -> str:
    if cut:
        return (
            f"the reply was {size:,} characters, more than the {allowed:,} allowed; "
            "its middle was cut"
        )
    return (
        f"not run: your reply was {size:,} characters, more than the {allowed:,} allowed in one "
        "reply, so none of its calls ran and their arguments were not kept. Write less per "
        "reply: split large content over several calls."
    )
