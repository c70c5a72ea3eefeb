"""A server's elicitation request asked through the session's clarify channel.

Every question names the server that asks (``MCP server 'NAME' asks: ...``, NAME as the
configuration has it), so the user never takes it for the agent's own. What the server wrote
(its message, a field's title or description, a choice) is shown on one line, line breaks
and other unprintable characters escaped (``neta.printable``), and cut at ``MAX_SHOWN_CHARS``:
a message cannot scroll the prefix away and ask again in another's name. Each field of the
requested schema becomes one question (an ``enum`` or a boolean gives choices); the answers
are converted to the field types and returned as ``accept``. A session without a clarify
callback, a crew child, a URL-mode request, or an answer that does not fit the field
declines; a request declined without asking is kept as a note for the tool result, so the
model (and a host without a live channel, as REST) reads who asked what.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neta import ClarifyFn, SessionContext, printable
from neta_mcp.results import MAX_NOTES

MAX_SHOWN_CHARS = 500
"""Characters of one text a server wrote (a message, a title, a choice) shown at most."""

_YES = {"yes", "y", "true", "1"}
_NO = {"no", "n", "false", "0"}


class ServerQuestions:
    """Answers one server's elicitation requests for one session (a link's ``elicit``).

    Args:
        session: the session whose clarify channel asks the user.
        server: the server's name in the configuration, which every question shows.
    """

    def __init__(self, session: SessionContext, server: str) -> None:
        self.session = session
        self.server = server
        self._notes: list[str] = []
        self._unnoted = 0  # requests declined past the notes a result keeps

    async def __call__(self, params: Any) -> Any:
        """Ask ``params`` (``ElicitRequestParams``) and return the ``ElicitResult``."""
        session = self.session
        clarify = session.clarify if session.entry != "crew" and session.user_channel else None
        if clarify is None:
            return self._declined(params.message, "nobody can be asked in this session")
        if getattr(params, "mode", "form") != "form":
            return self._declined(params.message, "Neta answers no URL requests")
        return await ask(clarify, params, self.server)

    def take_notes(self) -> list[str]:
        """The notes of requests declined without asking since the last call, each once.

        At most ``MAX_NOTES`` (what a result keeps): the last counts the requests left out.
        """
        notes, self._notes = self._notes, []
        if self._unnoted:
            plural = "s" if self._unnoted > 1 else ""
            more = f"asked {self._unnoted} more question{plural}, declined and not shown"
            notes.append(f"[MCP server {self.server!r} {more}]")
            self._unnoted = 0
        return notes

    def _declined(self, message: str, why: str) -> Any:
        from mcp_types import ElicitResult

        if len(self._notes) < MAX_NOTES - 1:  # room for the count of the rest
            self._notes.append(f"[{asks(self.server, message)} (declined: {why})]")
        else:
            self._unnoted += 1
        return ElicitResult(action="decline")


def asks(server: str, message: str) -> str:
    """``message`` as the user reads it: ``MCP server 'NAME' asks: ...``, on one line."""
    return f"MCP server {server!r} asks: {shown(message)}"


def shown(text: object) -> str:
    """``text`` (a server's) on one line, line breaks escaped, cut at ``MAX_SHOWN_CHARS``."""
    line = printable(str(text))
    if len(line) <= MAX_SHOWN_CHARS:
        return line
    return f"{line[:MAX_SHOWN_CHARS]}… [{len(line) - MAX_SHOWN_CHARS} more characters not shown]"


async def ask(clarify: ClarifyFn, params: Any, server: str) -> Any:
    """Ask ``params`` (``ElicitRequestParams``) of ``server`` through ``clarify``."""
    from mcp_types import ElicitResult

    message = asks(server, params.message)
    schema = getattr(params, "requested_schema", None) or {}
    properties: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    if not properties:
        reply = await clarify(message, ["accept", "decline"])
        return ElicitResult(action="accept" if reply.strip().lower() == "accept" else "decline")
    content: dict[str, Any] = {}
    for name, field in properties.items():
        question = _question(message, name, field, len(properties) > 1)
        choices = _choices(field)
        written: dict[str, str] = {}  # the user picks a choice as shown, the server gets it
        for choice in choices or ():
            written.setdefault(shown(choice), choice)
        reply = (await clarify(question, list(written) if choices is not None else None)).strip()
        if not reply and name not in required:
            continue
        value = _convert(written.get(reply, reply), field)
        if value is None:
            return ElicitResult(action="decline")
        content[name] = value
    return ElicitResult(action="accept", content=content)


def _question(message: str, name: str, field: dict[str, Any], several: bool) -> str:
    label = shown(field.get("title") or name)
    detail = shown(field.get("description") or "")
    if not several and not detail:
        return message
    line = f"{label}: {detail}" if detail else label
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
