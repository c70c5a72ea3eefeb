"""A server's elicitation request asked through the session's clarify channel.

Each field of the requested schema becomes one question (an ``enum`` or a boolean gives
choices); the answers are converted to the field types and returned as ``accept``. A session
without a clarify callback, a crew child, a URL-mode request, or an answer that does not fit
the field declines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neta import ClarifyFn, SessionContext

_YES = {"yes", "y", "true", "1"}
_NO = {"no", "n", "false", "0"}


def elicit_handler(session: SessionContext) -> Any:
    """The link's elicitation handler for ``session``, or ``None`` when it must decline."""
    if session.clarify is None or session.entry == "crew" or not session.user_channel:
        return None
    clarify = session.clarify

    async def answer(params: Any) -> Any:
        return await ask(clarify, params)

    return answer


async def ask(clarify: ClarifyFn, params: Any) -> Any:
    """Ask ``params`` (``ElicitRequestParams``) through ``clarify``; an ``ElicitResult``."""
    from mcp_types import ElicitResult

    if getattr(params, "mode", "form") != "form":
        return ElicitResult(action="decline")
    schema = getattr(params, "requested_schema", None) or {}
    properties: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    if not properties:
        reply = await clarify(params.message, ["accept", "decline"])
        return ElicitResult(action="accept" if reply.strip().lower() == "accept" else "decline")
    content: dict[str, Any] = {}
    for name, field in properties.items():
        question = _question(params.message, name, field, len(properties) > 1)
        reply = (await clarify(question, _choices(field))).strip()
        if not reply and name not in required:
            continue
        value = _convert(reply, field)
        if value is None:
            return ElicitResult(action="decline")
        content[name] = value
    return ElicitResult(action="accept", content=content)


def _question(message: str, name: str, field: dict[str, Any], several: bool) -> str:
    label = field.get("title") or name
    detail = field.get("description") or ""
    if not several and not detail:
        return message
    line = f"{label}: {detail}" if detail else str(label)
    return f"{message}\n{line}"


def _choices(field: dict[str, Any]) -> Sequence[str] | None:
    if "enum" in field:
        return [str(v) for v in field["enum"]]
    options = field.get("oneOf") or field.get("anyOf")
    if isinstance(options, list) and all(isinstance(o, dict) and "const" in o for o in options):
        return [str(o["const"]) for o in options]
    if field.get("type") == "boolean":
        return ["yes", "no"]
    return None


def _convert(reply: str, field: dict[str, Any]) -> Any:
    kind = field.get("type")
    try:
        if kind == "integer":
            return int(reply)
        if kind == "number":
            return float(reply)
    except ValueError:
        return None
    if kind == "boolean":
        lowered = reply.lower()
        return True if lowered in _YES else False if lowered in _NO else None
    choices = _choices(field)
    if choices is not None and reply not in choices:
        return None
    return reply
