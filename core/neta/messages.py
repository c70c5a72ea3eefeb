"""The conversation: messages in the Chat Completions shape, and token usage."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from neta.images import ImagePart
from neta.tools import ToolCall

_SURROGATE = re.compile("[\ud800-\udfff]")


def sendable(text: str) -> str:
    """``text`` with each lone half of a surrogate pair made U+FFFD (no API takes one).

    The same object when it holds none. Such halves come from bytes that are not UTF-8 read
    with ``surrogateescape`` (a command line, a tool's output) or from a JSON escape; stored
    as they are, every later request of the session would fail to encode.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


class Message(BaseModel):
    """One message of a conversation.

    Attributes:
        role: who speaks: ``system``, ``user``, ``assistant`` or ``tool`` (a tool's result).
        content: the text (``None`` for an assistant message that only calls tools).
        tool_calls: the calls an assistant message makes.
        tool_call_id: for a ``tool`` message, the call it answers.
        name: for a ``tool`` message, the tool's name.
        is_error: for a ``tool`` message, whether the call failed (providers whose API has
            a place for it, such as the Messages API's ``is_error``, send it).
        permission: for a ``tool`` message, how the call was allowed or denied
            (``action``, ``decided_by``, ``rule``, ``reason``, ``at``); kept with the
            session, never sent to the model.
        images: images a ``user`` or ``tool`` message carries, each also named in
            ``content`` by its placeholder (``[image: chart.png 800x600]``), so that whoever
            reads only the text sees it named; left out of the JSON when there are none.
    """

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False
    permission: dict[str, Any] | None = None
    images: list[ImagePart] = Field(default_factory=list, exclude_if=lambda images: not images)

    @field_validator("content")
    @classmethod
    def _sendable_content(cls, content: str | None) -> str | None:
        return None if content is None else sendable(content)

    @field_validator("tool_calls")
    @classmethod
    def _sendable_calls(cls, calls: list[ToolCall]) -> list[ToolCall]:
        return [
            call if sendable(call.arguments) is call.arguments
            else ToolCall(call.id, call.name, sendable(call.arguments))
            for call in calls
        ]  # fmt: skip

    def to_openai(self) -> dict[str, Any]:
        """This message as a Chat Completions request message.

        An assistant message with neither text nor tool calls (an empty reply) is sent with
        empty text: APIs reject one whose content is null without tool calls. A user message's
        images are ``image_url`` parts before its text; a tool message's are not sent here
        (the API takes only text there: ``neta.providers.json_body`` sends them in a user
        message after the turn's tool results).
        """
        content: str | list[dict[str, Any]] | None = self.content
        if content is None and self.role == "assistant" and not self.tool_calls:
            content = ""
        if self.images and self.role == "user":
            text = [{"type": "text", "text": self.content}] if self.content else []
            content = [*image_url_parts(self.images), *text]
        out: dict[str, Any] = {"role": self.role, "content": content}
        if self.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        return out


def image_url_parts(images: Sequence[ImagePart]) -> list[dict[str, Any]]:
    """``images`` as Chat Completions ``image_url`` content parts (``data:`` URLs)."""
    return [{"type": "image_url", "image_url": {"url": image.data_url()}} for image in images]


class Usage(BaseModel):
    """Tokens a provider reports, summed over the turns of a run.

    Attributes:
        input_tokens: every input token, those read from or written to a prompt cache included.
        output_tokens: tokens the model generated.
        cache_read_tokens: the part of ``input_tokens`` read from the provider's prompt cache
            (billed at a fraction of the price).
        cache_creation_tokens: the part of ``input_tokens`` written to the prompt cache.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0

    @field_validator("*")
    @classmethod
    def _not_below_zero(cls, count: int) -> int:
        return max(count, 0)  # a server may report a negative count: it is read as none

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_creation_tokens=self.cache_creation_tokens + other.cache_creation_tokens,
        )

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


INTERRUPTED = (
    "Error: this call was interrupted (the run was cancelled or the server restarted) before it "
    "returned a result. If a question was pending, the user's next message is the answer."
)
"""The result given to a tool call that never returned one."""


def waiting_calls(history: Sequence[Message]) -> list[ToolCall]:
    """The calls of the last assistant message that have no result yet.

    What a run left waiting for approval in the next message; none once a user message
    followed it.
    """
    return list(waiting_approvals(history).values())


def waiting_approvals(history: Sequence[Message]) -> dict[str, ToolCall]:
    """The calls a run left waiting for approval, by the request id each was asked under.

    The id (``deferred_approval_id``) names one call of one reply: a later call that reuses
    the model's call id, or the same arguments, is asked under another.
    """
    last = next(
        (i for i in range(len(history) - 1, -1, -1) if history[i].role == "assistant"), None
    )
    if last is None or any(m.role != "tool" for m in history[last + 1 :]):
        return {}
    answered = {m.tool_call_id for m in history[last + 1 :]}
    return {
        deferred_approval_id(last, call): call
        for call in history[last].tool_calls
        if call.id not in answered
    }


def deferred_approval_id(position: int, call: ToolCall) -> str:
    """The request id of a call left waiting for approval.

    A digest of its reply's place in the history and of the call itself (its id, tool and
    arguments).
    """
    text = "\0".join((str(position), call.id, call.name, call.arguments))
    return "approval-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def close_interrupted_calls(history: list[Message]) -> int:
    """Give every tool call that never got a result an "interrupted" result, in place.

    A run cancelled mid-call, or a server restarted while a question waited, leaves an
    assistant message whose calls have no results; most APIs reject such a history. Returns
    how many results were added.
    """
    added = 0
    index = 0
    while index < len(history):
        message = history[index]
        index += 1
        if message.role != "assistant" or not message.tool_calls:
            continue
        answered = set()
        while index < len(history) and history[index].role == "tool":
            answered.add(history[index].tool_call_id)
            index += 1
        for call in message.tool_calls:
            if call.id not in answered:
                history.insert(
                    index,
                    Message(
                        role="tool",
                        content=INTERRUPTED,
                        tool_call_id=call.id,
                        name=call.name,
                        is_error=True,
                    ),
                )
                index += 1
                added += 1
    return added
