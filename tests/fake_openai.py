"""A small OpenAI-compatible Chat Completions server on a 127.0.0.1 port, for tests.

It answers ``POST /v1/chat/completions`` from a queue of scripted replies, streamed (SSE) or
whole as the client asks, and records every request body it received, the client port each
came from (``peers``), the ``Authorization`` header each had (``authorizations``) and how many
client connections are open (``open_connections``). Like the real API it refuses (400) a
request whose history is invalid (``tests.openai_rules``; images included: only a user message
may hold one, as a ``data:`` URL of PNG, JPEG, GIF or WebP): such a request takes no reply from
the queue and is listed in ``rejected``. ``received_images`` lists the images a request held.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback_server import LoopbackServer
from tests.openai_rules import problem


@dataclass
class Reply:
    """One scripted reply: text and/or tool calls, or an HTTP error status.

    The rest plays servers that bend the protocol: ``finish_reason`` replaces the usual one;
    ``raw_chunks`` (streamed) are sent as they are, each merged into a chunk envelope;
    ``raw_message`` (whole) is the message as it is; a stream may ``fail_after`` some chunks
    (an error event, a dropped connection, a malformed chunk, or a body promised longer than
    it is: ``truncate``, which a whole reply takes too, sending half of it) or ``stall_after`` some
    chunks until the server closes. ``call_ids`` replaces the ids of the tool calls (to play
    a model that reuses one); ``cut_after_chars`` closes the stream once that many characters
    of text and arguments went out, with neither a finish reason nor ``[DONE]``; ``trickle``
    waits that many seconds before each chunk. ``refusal`` is a refusal the model gives (the
    message's ``refusal``, streamed as ``delta.refusal``); ``error`` is the error object a
    stream's ``fail_after`` ``"error"`` sends, or a whole reply's body (answered 200);
    ``interleave`` sends raw bytes before the chunk of that number (comments, ``id:`` or
    ``retry:`` alone, a byte order mark before the first; the number of chunks: before
    ``[DONE]``); ``line_end`` ends the lines of the chunks' events (CRLF or CR in place of LF).
    ``cached`` is the part of the prompt tokens read from the prompt cache, reported as
    ``usage.prompt_tokens_details.cached_tokens``.
    An error reply (``status`` other than 200) has ``text`` as its message and may give the
    error's ``code`` (``context_length_exceeded``, ``invalid_api_key``), as the real API does.
    """

    text: str = ""
    tool_calls: list[tuple[str, str]] = field(default_factory=list)  # (name, raw arguments)
    status: int = 200
    usage: tuple[int, int] | None = (10, 5)
    finish_reason: str | None = None
    raw_chunks: list[dict[str, Any]] | None = None
    raw_message: dict[str, Any] | None = None
    fail_after: tuple[int, str] | None = None  # (chunks, "error" | "drop" | "garbage" | "truncate")
    stall_after: int | None = None
    call_ids: list[str] | None = None
    cut_after_chars: int | None = None
    trickle: float = 0.0
    refusal: str = ""
    error: dict[str, Any] | None = None
    interleave: dict[int, bytes] = field(default_factory=dict)
    line_end: str = "\n"
    code: str | None = None
    cached: int = 0

    def call_id(self, index: int) -> str:
        """The id of tool call ``index``."""
        return self.call_ids[index] if self.call_ids is not None else f"call_{index}"


class FakeOpenAI:
    """The server; use as a context manager. ``base_url`` is what the SDK needs."""

    def __init__(self, replies: list[Reply] | None = None, *, validate: bool = True) -> None:
        self.replies: list[Reply] = list(replies or [])
        self.requests: list[dict[str, Any]] = []
        self.rejected: list[str] = []  # why each refused request was refused
        self.models: list[str] = ["fake-model", "fake-model-mini"]  # GET /v1/models
        self.validate = validate
        self.peers: list[int] = []
        self.authorizations: list[str] = []
        self.open_connections = 0
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._http = LoopbackServer(self._handler())

    @property
    def base_url(self) -> str:
        return f"{self._http.root}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._http.stop()

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            found = problem(body) if self.validate else None
            if found is not None:
                self.rejected.append(found)
                return Reply(status=400, text=found)
            if not self.replies:
                return Reply(status=500, text="fake server: no reply left")
            return self.replies.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                with fake._lock:
                    fake.open_connections += 1

            def finish(self) -> None:
                super().finish()
                with fake._lock:
                    fake.open_connections -= 1

            def do_GET(self) -> None:
                if not self.path.endswith("/models"):
                    self._send_json(404, {"error": {"message": "not found"}})
                    return
                listed = [
                    {"id": name, "object": "model", "created": 0, "owned_by": "fake"}
                    for name in fake.models
                ]
                self._send_json(200, {"object": "list", "data": listed})

            def do_POST(self) -> None:
                with fake._lock:
                    fake.peers.append(self.client_address[1])
                    fake.authorizations.append(self.headers.get("Authorization", ""))
                if self.headers.get("Content-Type", "").split(";")[0] != "application/json":
                    self._send_json(415, {"error": {"message": "the body must be JSON"}})
                    return
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self._send_json(404, {"error": {"message": "not found"}})
                    return
                reply = fake._next(body)
                if reply.status != 200:
                    error = {"message": reply.text or "error", "code": reply.code}
                    self._send_json(reply.status, {"error": error})
                elif body.get("stream"):
                    self._send_stream(body, reply)
                elif reply.fail_after is not None and reply.fail_after[1] == "truncate":
                    data = json.dumps(_completion(body, reply)).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data) * 2))  # promised, not sent
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(data[: len(data) // 2])
                    self.close_connection = True
                elif reply.error is not None:
                    self._send_json(200, {"error": reply.error})
                else:
                    self._send_json(200, _completion(body, reply))

            def _send_json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _send_stream(self, body: dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                if reply.fail_after is not None and reply.fail_after[1] == "truncate":
                    # a body promised longer than it is: the transport sees it broken
                    self.send_header("Content-Length", "1000000")
                self.end_headers()
                self.close_connection = True
                budget = reply.cut_after_chars
                chunks = list(_chunks(body, reply))
                for sent, chunk in enumerate(chunks):
                    if reply.stall_after == sent:
                        fake._closing.wait(30)
                        return
                    if sent in reply.interleave:
                        self.wfile.write(reply.interleave[sent])
                    if reply.fail_after is not None and reply.fail_after[0] == sent:
                        self._fail(reply.fail_after[1], reply.error)
                        return
                    if reply.trickle and fake._closing.wait(reply.trickle):
                        return
                    if budget is not None:
                        chunk, budget = _cut(chunk, budget)
                    end = reply.line_end
                    self.wfile.write(f"data: {json.dumps(chunk)}{end}{end}".encode())
                    self.wfile.flush()
                    if budget is not None and budget <= 0:
                        return  # the connection closes mid-reply
                if budget is not None:
                    return  # a cut reply never ends properly
                self.wfile.write(reply.interleave.get(len(chunks), b""))  # before [DONE]
                self.wfile.write(f"data: [DONE]{reply.line_end * 2}".encode())
                self.wfile.flush()

            def _fail(self, how: str, sent: dict[str, Any] | None) -> None:
                if how == "error":
                    error = {"message": "overloaded mid-stream", "type": "server"}
                    self.wfile.write(f"data: {json.dumps({'error': sent or error})}\n\n".encode())
                elif how == "garbage":
                    self.wfile.write(b"data: {not json\n\n")
                self.wfile.flush()  # "drop", "truncate": the connection just closes

        return Handler


def _base(body: dict[str, Any], obj: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": obj,
        "created": int(time.time()),
        "model": body.get("model", ""),
    }


def _usage(reply: Reply) -> dict[str, Any] | None:
    if reply.usage is None:
        return None
    prompt, completion = reply.usage
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": reply.cached, "audio_tokens": 0},
    }


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.refusal:
        message["refusal"] = reply.refusal
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": reply.call_id(i), "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(reply.tool_calls)
        ]
    if reply.raw_message is not None:
        message = reply.raw_message
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    return {
        **_base(body, "chat.completion"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _usage(reply),
    }


def _chunks(body: dict[str, Any], reply: Reply) -> Iterator[dict[str, Any]]:
    base = _base(body, "chat.completion.chunk")

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    if reply.raw_chunks is not None:
        for raw in reply.raw_chunks:
            yield {**base, **raw}
        return
    yield chunk({"role": "assistant", "content": ""})
    for piece in re.findall(r"\S+\s*|\s+", reply.text):
        yield chunk({"content": piece})
    for piece in re.findall(r"\S+\s*|\s+", reply.refusal):
        yield chunk({"refusal": piece})
    for i, (name, arguments) in enumerate(reply.tool_calls):
        head = {
            "index": i,
            "id": reply.call_id(i),
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        yield chunk({"tool_calls": [head]})
        half = len(arguments) // 2
        for part in (arguments[:half], arguments[half:]):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})
    yield chunk({}, reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop"))
    usage = _usage(reply)
    if usage is not None and body.get("stream_options", {}).get("include_usage"):
        yield {**base, "choices": [], "usage": usage}


def _cut(chunk: dict[str, Any], budget: int) -> tuple[dict[str, Any], int]:
    """``chunk`` with its text and arguments cut to ``budget`` characters, and what is left."""
    for choice in chunk.get("choices") or []:
        choice["finish_reason"] = None
        delta = choice.get("delta") or {}
        if delta.get("content"):
            delta["content"] = delta["content"][: max(budget, 0)]
            budget -= len(delta["content"]) or 1
        for call in delta.get("tool_calls") or []:
            function = call.get("function") or {}
            if function.get("arguments"):
                function["arguments"] = function["arguments"][: max(budget, 0)]
                budget -= len(function["arguments"]) or 1
    return chunk, budget


def received_images(body: dict[str, Any]) -> list[tuple[str, str, bytes]]:
    """The images a request held, in order: (the role of their message, media type, bytes)."""
    found = []
    for message in body.get("messages") or []:
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "image_url":
                head, _, data = part["image_url"]["url"].partition(",")
                kind = head.removeprefix("data:").removesuffix(";base64")
                found.append((message["role"], kind, base64.b64decode(data)))
    return found
