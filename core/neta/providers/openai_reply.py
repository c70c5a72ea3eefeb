"""A Chat Completions reply, streamed event by event or whole, as one ``ModelResponse``.

Replies are read as the plain JSON the server sent, tolerating servers that bend the protocol:
a value of the wrong kind counts as absent, a token count below zero as none. What the reply
itself says went wrong is a ``ProviderError``:

- an error object in place of the reply (``{"error": {...}}`` in a stream's event or as a whole
  body answered 200, an event named ``error``, a choice finished with ``error``) stands for the
  HTTP status its ``code`` gives, or its type names (``server_error`` 500, ``rate_limit_exceeded``
  429, ``overloaded_error`` 529...), and is retryable when that status would be; an error
  naming neither is not;
- an event whose data is not JSON ends the reply as malformed: the text or arguments it carried
  cannot be told, and a reply with a piece missing must not pass as the answer;
- a stream that ends before a finish reason was cut off on the way (``CutOff``, retryable).

A refusal (the message's ``refusal``, a stream's ``delta.refusal``) is the reply's text, streamed
as it comes, and the reply's finish reason is ``content_filter``, as for a reply the
provider's filter stopped: the run shows the refusal and says why it ended so.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from neta.errors import ProviderError
from neta.messages import Usage
from neta.providers.base import ModelResponse, TextSink
from neta.providers.retry import retryable_status
from neta.providers.sse import ServerSentEvent
from neta.tools import ToolCall

DONE = "[DONE]"
"""The data of the event that ends a stream."""

REFUSED = "content_filter"
"""The finish reason of a reply the model refused to give."""

# Error types and codes (lower case, without separators) as the HTTP status they stand for.
_KIND_STATUS = {
    "invalidrequesterror": 400,
    "badrequesterror": 400,
    "authenticationerror": 401,
    "invalidapikey": 401,
    "permissionerror": 403,
    "notfounderror": 404,
    "modelnotfound": 404,
    "timeout": 408,
    "timeouterror": 408,
    "ratelimiterror": 429,
    "ratelimitexceeded": 429,
    "servererror": 500,
    "apierror": 500,
    "internalerror": 500,
    "internalservererror": 500,
    "badgateway": 502,
    "serviceunavailable": 503,
    "serviceunavailableerror": 503,
    "gatewaytimeout": 504,
    "overloaded": 529,
    "overloadederror": 529,
}


class CutOff(ProviderError):
    """A streamed reply that ended before its finish reason (retryable, never the answer)."""

    def __init__(self, how: str) -> None:
        super().__init__(f"the model's reply was cut off: {how}", retryable=True)


def reply_error(error: Any) -> ProviderError:
    """The failure an error object sent inside a reply stands for (a string is its message)."""
    message = error if isinstance(error, str) else _text(error, "message")
    detail = _short(" ".join(message.split()) or "no message given")
    status = _status(error)
    if status is not None:  # said as an error answer is, since it stands for one
        return ProviderError(
            f"model API answered {status}: {detail}",
            retryable=retryable_status(status),
            status=status,
        )
    kind = _text(error, "type") or _text(error, "code")
    return ProviderError(
        f"model API sent an error in its reply{f' ({kind})' if kind else ''}: {detail}"
    )


def whole_reply(data: Any, on_text: TextSink) -> ModelResponse:
    """A reply asked for whole: its text (given to ``on_text`` at once) and tool calls.

    Raises:
        ProviderError: the body is an error, not a completion, or has no choices.
    """
    if not isinstance(data, dict):
        raise ProviderError(f"model API sent a malformed reply: not a JSON object: {_quote(data)}")
    if data.get("error"):
        raise reply_error(data["error"])
    choices = _items(data, "choices")
    if not choices:
        raise ProviderError("model API returned no choices")
    choice = choices[0]
    finish_reason = _text(choice, "finish_reason") or None
    if finish_reason == "error":
        raise reply_error(_field(choice, "error") or "the reply ended with an error")
    message = _field(choice, "message")
    refusal = _text(message, "refusal")
    text = _text(message, "content") + refusal
    if text:
        on_text(text)
    calls = []
    for raw in _items(message, "tool_calls"):
        function = _field(raw, "function")
        if _field(raw, "type") not in (None, "function") or not isinstance(function, dict):
            continue  # a kind of tool call this runtime does not offer
        calls.append(
            ToolCall(
                id=_text(raw, "id") or new_call_id(),
                name=_text(function, "name"),
                arguments=_arguments(function),
            )
        )
    usage = _field(data, "usage")
    return ModelResponse(
        text=text,
        tool_calls=calls,
        usage=usage_of(usage) if isinstance(usage, dict) else None,
        finish_reason=REFUSED if refusal else finish_reason,
        model=_text(data, "model"),
        id=_text(data, "id"),
    )


class StreamedReply:
    """Puts a streamed reply together: text to ``on_text`` as it comes, tool calls by index.

    Attributes:
        done: the stream sent ``[DONE]``: what follows is not part of the reply.
    """

    def __init__(self, on_text: TextSink) -> None:
        self.done = False
        self._on_text = on_text
        self._text: list[str] = []
        self._calls = _CallAssembler()
        self._usage: Usage | None = None
        self._finish_reason: str | None = None
        self._refused = False
        self._events = 0
        self._model = ""
        self._id = ""

    def add(self, event: ServerSentEvent) -> None:
        """Take one event of the stream.

        Raises:
            ProviderError: the event is an error, or its data is not JSON.
        """
        data = event.data.strip()
        if self.done or not data:  # an empty ``data:`` keeps the connection alive
            return
        if data == DONE:
            self.done = True
            return
        self._events += 1
        try:
            chunk = json.loads(data)
        except (ValueError, RecursionError):
            if event.event == "error":
                raise reply_error(data) from None
            raise ProviderError(
                f"model API sent a malformed reply: an event's data is not JSON: {_quote(data)}"
            ) from None
        if event.event == "error" or _field(chunk, "error"):
            raise reply_error(_field(chunk, "error") or chunk)
        self._add_chunk(chunk)

    def _add_chunk(self, chunk: Any) -> None:
        self._model = _text(chunk, "model") or self._model
        self._id = _text(chunk, "id") or self._id
        counted = _field(chunk, "usage")
        if counted:
            self._usage = usage_of(counted)
        for choice in _items(chunk, "choices"):
            finish_reason = _text(choice, "finish_reason")
            if finish_reason == "error":
                raise reply_error(_field(choice, "error") or "the reply ended with an error")
            self._finish_reason = finish_reason or self._finish_reason
            delta = _field(choice, "delta")
            for key in ("content", "refusal"):
                piece = _text(delta, key)
                if piece:
                    self._text.append(piece)
                    self._on_text(piece)
                    self._refused = self._refused or key == "refusal"
            for part in _items(delta, "tool_calls"):
                self._calls.add(part)

    def finish(self) -> ModelResponse:
        """The whole turn.

        Raises:
            CutOff: the stream ended before its finish reason.
        """
        if self._finish_reason is None:
            if not self._events:
                raise CutOff("the stream ended before any chunk of the reply")
            received = sum(map(len, self._text)) + self._calls.characters
            raise CutOff(f"the stream ended after {received} characters without a finish reason")
        return ModelResponse(
            text="".join(self._text),
            tool_calls=self._calls.finish(),
            usage=self._usage,
            finish_reason=REFUSED if self._refused else self._finish_reason,
            model=self._model,
            id=self._id,
        )


def usage_of(raw: Any) -> Usage:
    """Token counts from a Chat Completions ``usage`` (what is not a whole number counts 0).

    The prompt tokens read from the prompt cache (``prompt_tokens_details.cached_tokens``) are
    ``cache_read_tokens``, part of ``input_tokens`` as they are of ``prompt_tokens``; the API
    does not report cache writes.
    """
    return Usage(
        input_tokens=_count(raw, "prompt_tokens"),
        output_tokens=_count(raw, "completion_tokens"),
        cache_read_tokens=_count(_field(raw, "prompt_tokens_details"), "cached_tokens"),
    )


def new_call_id() -> str:
    """An id for a call the server sent without one (ids must differ across the history)."""
    return f"call_{uuid.uuid4().hex[:24]}"


@dataclass
class _PartialCall:
    """A tool call assembled from streamed fragments."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _CallAssembler:
    """Puts streamed tool-call fragments together, in the order the calls began.

    A fragment belongs to the call at its ``index``, or, without an index, to the latest
    call; a fragment that brings a different id starts a new call either way.
    """

    def __init__(self) -> None:
        self._calls: list[_PartialCall] = []
        self._by_index: dict[int, _PartialCall] = {}

    def add(self, part: Any) -> None:
        index = _field(part, "index")
        ident = _text(part, "id")
        partial = self._by_index.get(index) if isinstance(index, int) else None
        if partial is None and not isinstance(index, int) and self._calls:
            partial = self._calls[-1]
        if partial is None or (ident and partial.id and ident != partial.id):
            partial = _PartialCall()
            self._calls.append(partial)
            if isinstance(index, int):
                self._by_index[index] = partial
        partial.id = partial.id or ident
        function = _field(part, "function")
        if function is not None:
            name = _text(function, "name")
            if name != partial.name:  # some servers repeat the whole name in every fragment
                partial.name += name
            partial.arguments.append(_text(function, "arguments"))

    @property
    def characters(self) -> int:
        """How many characters of arguments arrived."""
        return sum(len(piece) for call in self._calls for piece in call.arguments)

    def finish(self) -> list[ToolCall]:
        return [
            ToolCall(id=c.id or new_call_id(), name=c.name, arguments="".join(c.arguments))
            for c in self._calls
        ]


def _status(error: Any) -> int | None:
    """The HTTP status an error object stands for: its numeric code, else its type or code."""
    for key in ("code", "status"):
        value = _field(error, key)
        if isinstance(value, str) and value.isascii() and value.isdigit():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return value
    for key in ("type", "code"):
        kind = "".join(c for c in _text(error, key).lower() if c.isalnum())
        if kind in _KIND_STATUS:
            return _KIND_STATUS[kind]
    return None


def _arguments(function: dict[str, Any]) -> str:
    """A whole reply's call arguments: the JSON text (an object some servers send is encoded)."""
    arguments = function.get("arguments")
    if isinstance(arguments, dict):
        return json.dumps(arguments)
    return arguments if isinstance(arguments, str) else ""


def _field(value: Any, key: str) -> Any:
    """``value[key]`` when ``value`` is a JSON object, else None (tolerating odd servers)."""
    return value.get(key) if isinstance(value, dict) else None


def _items(value: Any, key: str) -> list[Any]:
    """``value[key]`` when it is a JSON array, else an empty list."""
    found = _field(value, key)
    return found if isinstance(found, list) else []


def _text(value: Any, key: str) -> str:
    """``value[key]`` when it is a string, else the empty string."""
    found = _field(value, key)
    return found if isinstance(found, str) else ""


def _count(value: Any, key: str) -> int:
    """``value[key]`` when it is a whole number, else 0."""
    found = _field(value, key)
    return found if isinstance(found, int) and not isinstance(found, bool) else 0


def _quote(value: object, limit: int = 80) -> str:
    said = value if isinstance(value, str) else type(value).__name__
    return repr(_short(said, limit))


def _short(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[:limit] + "…"
