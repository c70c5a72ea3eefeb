"""What the model was sent and answered, as the JSON the GenAI semantic conventions describe.

Recorded only when content is (``neta.tracing``): ``gen_ai.system_instructions`` (a list of
text parts), ``gen_ai.input.messages`` (each message with its role and parts: ``text``,
``tool_call``, ``tool_call_response``) and ``gen_ai.output.messages`` (the reply). Images are
left out: their placeholders in the text name them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from neta.messages import Message
from neta.providers.base import ModelResponse
from neta.tools import ToolCall


class SentMessages:
    """The JSON of each request's messages, each message encoded once.

    A run's history only grows between its requests: when the message that ended the last
    request is still in its place, only the messages after it are new. Otherwise (another
    history, or one compacted) all are encoded again.
    """

    def __init__(self) -> None:
        self._count = 0
        self._last: Message | None = None
        self._system: list[str] = []
        self._sent: list[str] = []

    def json(self, messages: Sequence[Message]) -> tuple[str, str]:
        """The system instructions' JSON and the other messages' JSON."""
        count = self._count
        if count > len(messages) or (count and messages[count - 1] is not self._last):
            count, self._system, self._sent = 0, [], []
        for message in messages[count:]:
            if message.role == "system":
                self._system.append(_json({"type": "text", "content": message.content or ""}))
            else:
                self._sent.append(_json({"role": message.role, "parts": _parts(message)}))
        self._count = len(messages)
        self._last = messages[-1] if messages else None
        return f"[{','.join(self._system)}]", f"[{','.join(self._sent)}]"


def reply_json(response: ModelResponse) -> str:
    """``gen_ai.output.messages`` of one reply: the assistant's text and tool calls."""
    parts: list[dict[str, object]] = []
    if response.text:
        parts.append({"type": "text", "content": response.text})
    parts += [_call(call) for call in response.tool_calls]
    reply: dict[str, object] = {"role": "assistant", "parts": parts}
    if response.finish_reason:
        reply["finish_reason"] = response.finish_reason
    return _json([reply])


def _parts(message: Message) -> list[dict[str, object]]:
    if message.role == "tool":
        return [
            {"type": "tool_call_response", "id": message.tool_call_id, "result": message.content}
        ]
    parts: list[dict[str, object]] = []
    if message.content:
        parts.append({"type": "text", "content": message.content})
    parts += [_call(call) for call in message.tool_calls]
    return parts


def _call(call: ToolCall) -> dict[str, object]:
    try:
        arguments: object = json.loads(call.arguments)
    except ValueError:  # the model wrote bad JSON: kept as it came
        arguments = call.arguments
    return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": arguments}


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
