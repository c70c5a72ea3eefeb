"""The checks the OpenAI Chat Completions API makes on a request's history, for the fake server.

A real API answers 400 to a history it finds invalid, and a session that stored such a history
is stuck: every later request carries it. The fake server applies these rules so that tests
see the same refusal a real deployment would.
"""

from __future__ import annotations

import base64
import re
from typing import Any

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_DATA_URL = re.compile(r"^data:image/(png|jpeg|gif|webp);base64$")
_ROLES = {"system", "developer", "user", "assistant", "tool"}


def problem(body: dict[str, Any]) -> str | None:
    """What the real API would refuse in ``body`` (its message), or ``None`` when it is valid."""
    for index, tool in enumerate(body.get("tools") or []):
        name = (tool.get("function") or {}).get("name", "")
        if not NAME.match(name):
            return _pattern(f"tools[{index}].function.name")
    found = _response_format(body.get("response_format"))
    if found is not None:
        return found
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "Invalid 'messages': empty array. Expected an array with minimum length 1."
    waiting: list[str] = []  # ids of the last assistant message still without a result
    answered: set[str] = set()
    used: set[str] = set()  # every call id of the request: one answers one call only
    for index, message in enumerate(messages):
        role = message.get("role")
        if role not in _ROLES:
            return f"Invalid value: '{role}'. Supported values are: {sorted(_ROLES)}."
        if role != "tool" and waiting:
            return _unanswered(waiting)
        if role == "assistant":
            found = _assistant(index, message, used)
            if found is not None:
                return found
            waiting = [call["id"] for call in message.get("tool_calls") or []]
            answered = set()
        elif role == "tool":
            found = _tool(index, message, waiting, answered)
            if found is not None:
                return found
        elif not isinstance(message.get("content"), str | list):
            return f"Invalid value for 'messages[{index}].content': expected a string, got null."
        found = _parts(index, message)
        if found is not None:
            return found
    if waiting:
        return _unanswered(waiting)
    return None


def _parts(index: int, message: dict[str, Any]) -> str | None:
    """What the API refuses in a message's content parts: images outside user messages, bad URLs."""
    content = message.get("content")
    for number, part in enumerate(content if isinstance(content, list) else []):
        where = f"messages[{index}].content[{number}]"
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            continue
        if kind != "image_url":
            return f"Invalid value: '{kind}'. Supported values are: 'text' and 'image_url'."
        if message.get("role") != "user":
            return (
                f"Invalid '{where}': image URLs are only allowed for messages with role "
                f"'user', but this message with role '{message.get('role')}' contains one."
            )
        url = (part.get("image_url") or {}).get("url", "")
        head, _, data = url.partition(",")
        if not _DATA_URL.match(head) or not _decodes(data):
            return f"Invalid '{where}.image_url.url': expected a base64 data URL of an image."
    return None


def _decodes(data: str) -> bool:
    try:
        return bool(base64.b64decode(data, validate=True))
    except ValueError:
        return False


def _assistant(index: int, message: dict[str, Any], seen: set[str]) -> str | None:
    calls = message.get("tool_calls") or []
    if message.get("content") is None and not calls:
        return f"Invalid value for 'messages[{index}].content': expected a string, got null."
    for number, call in enumerate(calls):
        ident = call.get("id")
        if not isinstance(ident, str) or not ident:
            return f"Missing required parameter: 'messages[{index}].tool_calls[{number}].id'."
        if ident in seen:
            return (
                f"Invalid parameter: Duplicate value for 'tool_call_id' of {ident} in "
                f"message[{index}]. Please ensure all tool call IDs are unique."
            )
        seen.add(ident)
        if not NAME.match((call.get("function") or {}).get("name") or ""):
            return _pattern(f"messages[{index}].tool_calls[{number}].function.name")
    return None


def _tool(
    index: int, message: dict[str, Any], waiting: list[str], answered: set[str]
) -> str | None:
    ident = message.get("tool_call_id")
    if ident in answered:
        return (
            f"Invalid parameter: Duplicate value for 'tool_call_id' of {ident} in "
            f"message[{index}]. Please ensure all tool call IDs are unique."
        )
    if ident not in waiting:
        return (
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
            "message with 'tool_calls'."
        )
    answered.add(ident)
    waiting.remove(ident)
    return None


def _response_format(given: Any) -> str | None:
    """What the API refuses in a ``response_format``: a JSON schema needs a name and an object."""
    if given is None:
        return None
    if not isinstance(given, dict) or given.get("type") not in (
        "text",
        "json_object",
        "json_schema",
    ):
        return "Invalid value for 'response_format.type'."
    if given["type"] != "json_schema":
        return None
    spec = given.get("json_schema")
    if not isinstance(spec, dict) or not NAME.match(str(spec.get("name", ""))):
        return _pattern("response_format.json_schema.name")
    schema = spec.get("schema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return "Invalid schema for response_format: schema must be a JSON Schema of type object."
    return None


def _unanswered(ids: list[str]) -> str:
    return (
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(ids)
    )


def _pattern(where: str) -> str:
    return (
        f"Invalid '{where}': string does not match pattern. Expected a string that matches "
        "the pattern '^[a-zA-Z0-9_-]+$'."
    )
