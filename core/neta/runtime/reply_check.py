"""What of a model's reply the runtime stores: always a history every provider accepts.

A model may call a tool by a name the API refuses (``read file``, ``""``), reuse a call id
(within one reply, or in every reply: a server answering ``call_0`` each time), send an id of
a shape another API refuses, send arguments that are not a JSON object or nest too deeply to
read, make thousands of calls in one reply or write megabytes. Stored as received, such a
reply would make every later request fail, on this provider or the next; so before anything
runs, the reply is made valid and bounded, and each call that must not run gets an error
result saying why. This is the one place a reply becomes history (``check_reply``), and the
one place a history stored before becomes valid again (``repair_history``).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Collection
from dataclasses import dataclass, field

from neta.catalog import TOOL_NAME_PATTERN
from neta.errors import ToolError
from neta.messages import Message
from neta.providers.base import ModelResponse
from neta.runtime.arguments import MAX_ARGUMENT_DEPTH, read_arguments
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
_VALID_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what every provider's API accepts

__all__ = [
    "DEFAULT_MAX_CALLS_PER_REPLY",
    "DEFAULT_MAX_REPLY_CHARS",
    "INVALID_NAME",
    "MAX_ARGUMENT_DEPTH",
    "CheckedReply",
    "check_reply",
    "repair_history",
]
_NAME_RULE = "a tool name is 1 to 64 letters, digits, '_' or '-'"


@dataclass(frozen=True)
class CheckedReply:
    """A reply made fit to store and run.

    Attributes:
        message: the assistant message to store and re-send: valid names, ids unique in the
            session, arguments each a JSON object, bounded.
        calls: the calls of ``message``, in order.
        refused: for each call that must not run, by call id, the error the model reads.
        arguments: the arguments of each call that may run, by call id, as read.
        note: why the stored reply differs from what the model sent, if it does (for a reply
            without calls, whose text was cut).
    """

    message: Message
    calls: list[ToolCall]
    refused: dict[str, str] = field(default_factory=dict)
    arguments: dict[str, dict[str, object]] = field(default_factory=dict)
    note: str = ""


def check_reply(
    response: ModelResponse,
    tool_names: Collection[str],
    *,
    used_ids: Collection[str] = (),
    stop_note: str = "",
    max_calls: int = DEFAULT_MAX_CALLS_PER_REPLY,
    max_chars: int = DEFAULT_MAX_REPLY_CHARS,
) -> CheckedReply:
    """Make ``response`` valid to store and bounded, and say which calls must not run.

    ``used_ids`` are the call ids the session's history holds already: a call reusing one is
    stored under a new id. A call whose arguments cannot be read (``read_arguments``) is
    stored with ``{}`` and refused with why; ``stop_note`` says why the reply was cut, if it was.
    """
    text = response.text
    raw = response.tool_calls
    size = len(text) + sum(len(c.arguments) + len(c.name) for c in raw)
    oversized = size > max_chars
    if oversized:
        text = truncate_middle(text, max_chars)
    calls: list[ToolCall] = []
    refused: dict[str, str] = {}
    arguments: dict[str, dict[str, object]] = {}
    seen = set(used_ids)
    for index, call in enumerate(raw[: max_calls + 1]):
        ident = _unique_id(call.id, seen)
        name = call.name if _VALID_NAME.match(call.name) else INVALID_NAME
        if oversized:
            refused[ident] = _too_large(size, max_chars)
        elif index == max_calls:
            refused[ident] = _too_many(len(raw), max_calls)
        elif name != call.name:
            refused[ident] = _invalid_name(call.name, tool_names)
        else:
            try:
                arguments[ident] = read_arguments(call, stop_note)
            except ToolError as exc:
                refused[ident] = str(exc)
        kept = "{}" if ident in refused else call.arguments
        same = (ident, name, kept) == (call.id, call.name, call.arguments)
        calls.append(call if same else ToolCall(id=ident, name=name, arguments=kept))
    message = Message(role="assistant", content=text or None, tool_calls=calls)
    note = "" if raw or not oversized else _too_large(size, max_chars, cut=True)
    return CheckedReply(message, message.tool_calls, refused, arguments, note)


def repair_history(history: list[Message], *, checked: int = 0) -> int:
    """Make a stored history valid in place, as ``check_reply`` would have stored it.

    For histories stored before the runtime checked replies as it does now (or given by a
    host): call names the API accepts, ids unique across the whole history and of a shape
    every API accepts, and arguments a JSON object (a call whose arguments cannot be read
    keeps ``{}``). The tool messages that answer a renamed call follow its new id. The
    arguments of the first ``checked`` messages were read before and are not read again.
    Returns how many assistant messages were repaired.
    """
    repaired = 0
    seen: set[str] = set()
    for index, message in enumerate(history):
        if message.role != "assistant" or not message.tool_calls:
            continue
        calls = [_repaired(call, seen, index >= checked) for call in message.tool_calls]
        if calls == message.tool_calls:
            continue
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


def _repaired(call: ToolCall, seen: set[str], read: bool) -> ToolCall:
    ident = _unique_id(call.id, seen)
    name = call.name if _VALID_NAME.match(call.name) else INVALID_NAME
    keep = name == call.name and (not read or _readable(call))
    arguments = call.arguments if keep else "{}"
    if (ident, name, arguments) == (call.id, call.name, call.arguments):
        return call
    return ToolCall(id=ident, name=name, arguments=arguments)


def _readable(call: ToolCall) -> bool:
    try:
        read_arguments(call)
    except ToolError:
        return False
    return True


def _unique_id(ident: str, seen: set[str]) -> str:
    """``ident`` if it is new and of a shape every API accepts, else a unique id like it."""
    if not _VALID_ID.match(ident):
        ident = _new_id()
    unique, number = ident, 1
    while unique in seen:
        number += 1
        unique = f"{ident}_{number}"
        if len(unique) > 64:
            unique = ident = _new_id()
    seen.add(unique)
    return unique


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


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
