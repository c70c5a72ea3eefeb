"""A session's history as Messages API blocks, and back.

Neta keeps a conversation in one shape (system, user, assistant text + tool calls, tool
results) whatever the provider, so a session may change provider between turns. This module
maps that shape onto the Messages API: system messages become the ``system`` blocks, an
assistant's tool calls ``tool_use`` blocks, tool results ``tool_result`` blocks of the next
user turn (``is_error`` set for failures), images ``image`` blocks (base64, in the
``tool_result`` of a tool's images, before the text of a user's), and turns of the same role
are merged, as the API wants them to alternate. The system prompt and the tool list carry
cache breakpoints: they stay the same within a session, so later turns read them from the
prompt cache.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from neta import ImagePart, Message, ToolCall

CACHE_BREAKPOINT: dict[str, str] = {"type": "ephemeral"}
"""The ``cache_control`` value that ends a cached prefix."""

MAX_INPUT_DEPTH = 100
"""How deeply a call's input may nest and still be sent (the object itself is level 1).

Far past what any tool takes, far short of what the SDK's encoder can write without running out
of stack."""

_EMPTY = "(empty)"  # the API refuses empty text blocks; a turn needs some content


def system_blocks(messages: Iterable[Message], *, cache: bool = True) -> list[dict[str, Any]]:
    """The system prompt as text blocks, the last one a cache breakpoint."""
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": m.content} for m in messages if m.role == "system" and m.content
    ]
    if cache and blocks:
        blocks[-1]["cache_control"] = CACHE_BREAKPOINT
    return blocks


def tool_definitions(
    tools: Sequence[dict[str, Any]], *, cache: bool = True
) -> list[dict[str, Any]]:
    """Tools in the OpenAI ``tools`` format as Messages API tools, the last a cache breakpoint."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        function = tool.get("function", tool)
        out.append(
            {
                "name": function["name"],
                "description": function.get("description", ""),
                "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
            }
        )
    if cache and out:
        out[-1]["cache_control"] = CACHE_BREAKPOINT
    return out


def to_anthropic(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """The conversation (system messages left out) as alternating Messages API turns."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    for turn in turns:
        if not turn["content"]:
            turn["content"] = [{"type": "text", "text": _EMPTY}]
        elif turn["role"] == "user":  # tool results must come before anything else in a turn
            turn["content"].sort(key=lambda block: block["type"] != "tool_result")
    return turns


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        result: str | list[dict[str, Any]] = message.content or _EMPTY
        if message.images:
            result = [{"type": "text", "text": result}, *map(_image_block, message.images)]
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": result,
                "is_error": message.is_error,
            }
        ]
    blocks: list[dict[str, Any]] = [_image_block(image) for image in message.images]
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": _input(call.arguments)}
        )
    return blocks


def _image_block(image: ImagePart) -> dict[str, Any]:
    source = {"type": "base64", "media_type": image.media_type, "data": image.data}
    return {"type": "image", "source": source}


def _input(arguments: str) -> dict[str, Any]:
    """A call's arguments as the object ``tool_use.input`` must be, whatever the history holds.

    Arguments the model wrote as broken JSON, or as JSON other than an object, were answered
    with an error already; they are sent back as the text they were, so the model sees what it
    wrote. Arguments that cannot be sent at all (nested past ``MAX_INPUT_DEPTH``, numbers JSON
    has no form for such as ``NaN`` or thousands of digits, half a surrogate pair) go back as an
    empty object: that call's result told the model it failed, and the session goes on.
    """
    try:
        value = json.loads(arguments or "{}", parse_constant=_no_constant)
    except json.JSONDecodeError:
        return {"unparsed_arguments": arguments} if _sendable(arguments) else {}
    except (ValueError, RecursionError):  # NaN, too many digits, nested too deep to read
        return {}
    if not isinstance(value, dict):
        return {"unparsed_arguments": arguments} if _sendable(arguments) else {}
    if _deeper_than(value, MAX_INPUT_DEPTH) or not _sendable(value):
        return {}
    return value


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _sendable(value: object) -> bool:
    """Whether ``value`` can be written as the UTF-8 JSON of a request."""
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode()
    except (ValueError, RecursionError):  # a lone surrogate is a UnicodeEncodeError
        return False
    return True


def _deeper_than(value: dict[str, Any], limit: int) -> bool:
    """Whether objects and arrays nest in ``value`` more than ``limit`` levels."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, dict | list):
                if depth == limit:
                    return True
                stack.append((child, depth + 1))
    return False


def from_anthropic(
    system: str | Sequence[dict[str, Any]] | None, turns: Iterable[dict[str, Any]]
) -> list[Message]:
    """Messages API ``system`` and turns as Neta's history (the inverse of ``to_anthropic``)."""
    history: list[Message] = []
    system_text = system if isinstance(system, str) else _text(system or [])
    if system_text:
        history.append(Message(role="system", content=system_text))
    names: dict[str, str] = {}
    for turn in turns:
        content = turn.get("content", "")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if turn.get("role") == "assistant":
            calls = [
                ToolCall(id=b["id"], name=b["name"], arguments=json.dumps(b.get("input", {})))
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            names.update((call.id, call.name) for call in calls)
            text = _text(blocks)
            history.append(Message(role="assistant", content=text or None, tool_calls=calls))
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                call_id = block.get("tool_use_id", "")
                result = block.get("content", "")
                history.append(
                    Message(
                        role="tool",
                        content=result if isinstance(result, str) else _text(result),
                        tool_call_id=call_id,
                        name=names.get(call_id),
                        is_error=bool(block.get("is_error")),
                        images=[] if isinstance(result, str) else _images(result),
                    )
                )
        text, images = _text(blocks), _images(blocks)
        if text or images:
            history.append(Message(role="user", content=text, images=images))
    return history


def _images(blocks: Iterable[dict[str, Any]]) -> list[ImagePart]:
    return [
        ImagePart(media_type=b["source"]["media_type"], data=b["source"]["data"])
        for b in blocks
        if b.get("type") == "image" and b.get("source", {}).get("type") == "base64"
    ]


def _text(blocks: Iterable[dict[str, Any]]) -> str:
    return "".join(
        b.get("text", "") for b in blocks if b.get("type") == "text" and b.get("text") != _EMPTY
    )
