"""A Messages API reply, whole or streamed event by event, as one ``ModelResponse``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from neta import ModelResponse, ProviderError, TextSink, ToolCall, Usage

STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
"""Messages API stop reasons as the runtime's finish reasons (``length``: cut off)."""


def finish_reason(stop_reason: str | None) -> str | None:
    """The runtime's finish reason for a Messages API ``stop_reason``."""
    if stop_reason is None:
        return None
    return STOP_REASONS.get(stop_reason, stop_reason)


def usage_of(raw: Any) -> Usage:
    """Token counts from a Messages API ``usage`` (input counts cached tokens too).

    A count that is not a whole number, or is below zero, counts as none.
    """
    read = _count(raw, "cache_read_input_tokens")
    created = _count(raw, "cache_creation_input_tokens")
    return Usage(
        input_tokens=_count(raw, "input_tokens") + read + created,
        output_tokens=_count(raw, "output_tokens"),
        cache_read_tokens=read,
        cache_creation_tokens=created,
    )


def _text(raw: Any, name: str) -> str:
    value = getattr(raw, name, None)
    return value if isinstance(value, str) else ""


def _count(raw: Any, name: str) -> int:
    value = getattr(raw, name, None)
    return max(value, 0) if isinstance(value, int) and not isinstance(value, bool) else 0


def whole_reply(message: Any, on_text: TextSink) -> ModelResponse:
    """A reply asked for whole: its text blocks (given to ``on_text`` at once) and tool uses."""
    text = "".join(b.text for b in message.content if b.type == "text")
    if text:
        on_text(text)
    calls = [
        ToolCall(id=b.id, name=b.name, arguments=json.dumps(b.input))
        for b in message.content
        if b.type == "tool_use"
    ]
    return ModelResponse(
        text=text,
        tool_calls=calls,
        usage=usage_of(message.usage),
        finish_reason=finish_reason(message.stop_reason),
        model=_text(message, "model"),
        id=_text(message, "id"),
    )


_COUNTS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


class _Counts:
    """Usage counts gathered from several events, read like the SDK's ``usage``."""

    def __init__(self, counts: dict[str, int]) -> None:
        for name in _COUNTS:
            setattr(self, name, counts.get(name, 0))


@dataclass
class _ToolUse:
    id: str
    name: str
    parts: list[str] = field(default_factory=list)
    given: dict[str, Any] | None = None  # an input sent whole with the block's start


class ReplyAssembler:
    """Puts a streamed reply together: text to ``on_text`` as it comes, tool uses by block.

    The reply is whole once its stop reason came (``message_delta``) and every content block
    that started has stopped: a stream that ends there without its ``message_stop`` lost
    nothing of it. A stream that ends before, in the middle of a block or before the stop
    reason, was cut off on the way.
    """

    def __init__(self, on_text: TextSink) -> None:
        self._on_text = on_text
        self._text: list[str] = []
        self._tools: dict[int, _ToolUse] = {}
        self._usage = Usage()
        self._counts: dict[str, int] = {}
        self._stop_reason: str | None = None
        self._open: set[int] = set()  # blocks started and not yet stopped
        self._model = ""
        self._id = ""

    def add(self, event: Any) -> None:
        """Take one stream event; kinds this runtime does not use are ignored."""
        kind = getattr(event, "type", None)
        if kind == "message_start":
            self._model = _text(event.message, "model")
            self._id = _text(event.message, "id")
            self._merge_usage(event.message.usage)
        elif kind == "content_block_start":
            self._open.add(event.index)
            block = event.content_block
            if block.type == "tool_use":
                given = block.input if isinstance(block.input, dict) and block.input else None
                self._tools[event.index] = _ToolUse(block.id, block.name, given=given)
            elif block.type == "text" and block.text:
                self._add_text(block.text)
        elif kind == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                self._add_text(delta.text)
            elif delta.type == "input_json_delta" and event.index in self._tools:
                self._tools[event.index].parts.append(delta.partial_json)
        elif kind == "content_block_stop":
            self._open.discard(event.index)
        elif kind == "message_delta":
            self._stop_reason = event.delta.stop_reason or self._stop_reason
            self._merge_usage(event.usage)

    def _add_text(self, text: str) -> None:
        self._text.append(text)
        self._on_text(text)

    def _merge_usage(self, raw: Any) -> None:
        """``message_delta`` counts are cumulative; a count it leaves out keeps its value."""
        for name in _COUNTS:
            value = getattr(raw, name, None)
            if isinstance(value, int) and not isinstance(value, bool):
                self._counts[name] = value
        self._usage = usage_of(_Counts(self._counts))

    def finish(self) -> ModelResponse:
        """The whole turn.

        Raises:
            ProviderError: the stream ended before the reply did (retryable: asked again).
        """
        if self._open or self._stop_reason is None:
            received = sum(map(len, self._text)) + sum(
                len(p) for t in self._tools.values() for p in t.parts
            )
            where = "in the middle of a content block" if self._open else "without a stop reason"
            raise ProviderError(
                f"the reply was cut off on the way: the stream ended after {received} "
                f"characters {where}",
                retryable=True,
            )
        calls = [
            ToolCall(
                id=tool.id,
                name=tool.name,
                arguments="".join(tool.parts) if tool.parts else json.dumps(tool.given or {}),
            )
            for _, tool in sorted(self._tools.items())
        ]
        return ModelResponse(
            text="".join(self._text),
            tool_calls=calls,
            usage=self._usage,
            finish_reason=finish_reason(self._stop_reason),
            model=self._model,
            id=self._id,
        )
