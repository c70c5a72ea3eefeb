"""Chat Completions request bodies built from pieces encoded once and then reused.

Every turn of a run sends the whole conversation and the same tool schemas again: a body of
tens of kilobytes (a system prompt of ~10 KB, ~15 KB of schemas) of which only the last message
or two are new. ``BodyEncoder`` keeps the JSON of each message and tool definition of the last
body it built, by the object's identity, and the next body reuses what it repeats: a turn
encodes only what it adds. Tool definitions are shared by the sessions that offer the same
tools, so their JSON is kept for the whole process (``SHARED_TOOLS`` of them at most), and a new
session's first body encodes its own messages only. Messages are frozen and offered tool
definitions are not changed, so an object seen again is the same JSON (``ModelRequest`` asks
callers to replace a message or tool definition, never to change one in place); whatever keeps
an object's JSON holds the object too, so its identity cannot pass to another object meanwhile.
A provider forgets its conversation's pieces when a run ends (``forget``): a session waiting for
its next message should not hold its history twice.

The API takes only text in a tool message, so a tool result's images go in a user message of
their own after the turn's last tool result (``tool_images``).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from neta.messages import Message, image_url_parts

SHARED_TOOLS = 1024
"""The most tool definitions whose JSON the process keeps (then it starts over)."""

_tools: dict[int, tuple[object, bytes]] = {}
_Kept = tuple[Message, bytes, bytes | None]  # the message, its JSON, its images' message's JSON


def dumps(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON, as the ``openai`` SDK writes request bodies.

    Raises:
        ValueError: a value JSON cannot hold (NaN, infinity), or text that is not Unicode (a
            lone surrogate).
        TypeError: an object JSON has no form for.
    """
    text = json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_plain
    )
    return text.encode()


def _plain(value: object) -> object:
    # what the SDK's own encoder accepts beside JSON's types
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_unset=True, by_alias=True)
    raise TypeError(f"{type(value).__name__} is not JSON")


class BodyEncoder:
    """Encodes request bodies, reusing the JSON of the messages and tools the last one sent.

    Meant for one conversation (a provider serves one session): bodies of several
    conversations built in turn are still right, only encoded whole more often.
    """

    def __init__(self) -> None:
        self.encoded = 0
        """How many pieces were encoded rather than reused (for tests and benchmarks)."""
        self._kept: dict[int, _Kept] = {}

    def body(
        self,
        model: str,
        messages: Iterable[Message],
        tools: Sequence[Mapping[str, Any]],
        extra: Mapping[str, Any] | None = None,
    ) -> bytes:
        """The JSON body: ``model``, ``messages``, ``tools`` (when any) and ``extra``'s keys."""
        used: dict[int, _Kept] = {}
        encoded: list[bytes] = []
        images: list[bytes] = []  # of the tool results just encoded: sent once they end
        for message in messages:
            _, text, after = self._message(message, used)
            if message.role != "tool":
                encoded += images
                images.clear()
            encoded.append(text)
            if after is not None:
                images.append(after)
        parts = [b'{"model":', dumps(model), b',"messages":[']
        parts.append(b",".join([*encoded, *images]))
        parts.append(b"]")
        if tools:
            parts.append(b',"tools":[')
            parts.append(b",".join(self._tool(t) for t in tools))
            parts.append(b"]")
        for key, value in (extra or {}).items():
            parts += [b",", dumps(key), b":", dumps(value)]
        parts.append(b"}")
        self._kept = used
        return b"".join(parts)

    def forget(self) -> None:
        """Drop the kept JSON of the conversation's messages (the tools' stays shared)."""
        self._kept = {}

    def _message(self, message: Message, used: dict[int, _Kept]) -> _Kept:
        key = id(message)
        kept = self._kept.get(key)  # it holds the message: the id is that message's
        if kept is None:
            after = tool_images(message)
            kept = (message, dumps(message.to_openai()), None if after is None else dumps(after))
            self.encoded += 1
        used[key] = kept
        return kept

    def _tool(self, tool: Mapping[str, Any]) -> bytes:
        key = id(tool)
        kept = _tools.get(key)  # it holds the definition: the id is that definition's
        if kept is None:
            if len(_tools) >= SHARED_TOOLS:
                _tools.clear()
            kept = _tools[key] = (tool, dumps(tool))
            self.encoded += 1
        return kept[1]


def tool_images(message: Message) -> dict[str, Any] | None:
    """The user message that shows a tool result's images, or ``None`` for a message without."""
    if message.role != "tool" or not message.images:
        return None
    said = f"The images of the {message.name or 'tool'} result ({message.tool_call_id}):"
    return {
        "role": "user",
        "content": [{"type": "text", "text": said}, *image_url_parts(message.images)],
    }
