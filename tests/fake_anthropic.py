"""A small Anthropic Messages API server on a 127.0.0.1 port, for tests.

It answers ``POST /v1/messages`` from a queue of scripted replies, streamed (SSE events as the
real API sends them: ``message_start``, ``content_block_*``, ``message_delta``,
``message_stop``) or whole as the client asks, and records every request: its body and its
headers. It checks what the real API would refuse: a missing key, ``max_tokens``, turns that
do not alternate, empty text, a ``tool_use`` id used twice in the request, a ``tool_result``
that answers no ``tool_use`` of the turn before, a ``tool_choice`` naming no offered tool. A
refused history takes no reply from the queue and is listed in ``rejected``. An image must be
a base64 PNG, JPEG, GIF or WebP of a user turn (in it, or in a ``tool_result``'s content);
``received_images`` lists what a request held.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback_server import LoopbackServer


@dataclass
class Reply:
    """One scripted reply: text and/or tool uses, or an HTTP error.

    ``usage`` is (input, output, cache read, cache creation). An error reply has a
    ``status`` other than 200 with ``error_type`` and ``text`` as its message, and may send
    ``headers`` (``retry-after``). ``cut_after`` ends a stream after that many events, without
    its ``message_stop``; ``error_event`` sends an error event instead of the reply's end.
    ``leave_out`` names events the stream does not send (``message_stop``); ``interleave``
    sends raw bytes before the event of that number (comments, ``id:`` or ``retry:`` alone).
    """

    text: str = ""
    tool_calls: list[tuple[str, str]] = field(default_factory=list)  # (name, raw JSON input)
    stop_reason: str | None = None
    usage: tuple[int, int, int, int] = (10, 5, 0, 0)
    status: int = 200
    error_type: str = "api_error"
    headers: dict[str, str] = field(default_factory=dict)
    cut_after: int | None = None
    error_event: str | None = None
    leave_out: tuple[str, ...] = ()
    interleave: dict[int, bytes] = field(default_factory=dict)


class FakeAnthropic:
    """The server; use as a context manager. ``base_url`` is what the SDK needs."""

    def __init__(self, replies: list[Reply] | None = None, *, api_key: str = "sk-ant-test") -> None:
        self.replies: list[Reply] = list(replies or [])
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.rejected: list[str] = []  # why each refused history was refused
        self.api_key = api_key
        self._lock = threading.Lock()
        self._http = LoopbackServer(self._handler())

    @property
    def base_url(self) -> str:
        return self._http.root

    def __enter__(self) -> FakeAnthropic:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.stop()

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            sent = headers.get("x-api-key") or headers.get("authorization", "").removeprefix(
                "Bearer "
            )
            if sent != self.api_key:
                return Reply(status=401, error_type="authentication_error", text="invalid API key")
            problem = _refusal(body)
            if problem:
                self.rejected.append(problem)
                return Reply(status=400, error_type="invalid_request_error", text=problem)
            if not self.replies:
                return Reply(status=500, text="fake server: no reply left")
            return self.replies.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.split("?")[0] != "/v1/models":
                    self._send_json(404, _error("not_found_error", f"no route {self.path}"))
                    return
                listed = [
                    {
                        "type": "model",
                        "id": name,
                        "display_name": name,
                        "created_at": "2026-01-01T00:00:00Z",
                    }
                    for name in ("claude-fake", "claude-fake-mini")
                ]
                page = {"data": listed, "has_more": False, "first_id": None, "last_id": None}
                self._send_json(200, page)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.split("?")[0] != "/v1/messages":
                    self._send_json(404, _error("not_found_error", f"no route {self.path}"))
                    return
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = fake._next(body, headers)
                if reply.status != 200:
                    payload = _error(reply.error_type, reply.text or "error")
                    self._send_json(reply.status, payload, reply.headers)
                elif body.get("stream"):
                    self._send_stream(body, reply)
                else:
                    self._send_json(200, _message(body, reply))

            def _send_json(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _send_stream(self, body: dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                for sent, (name, data) in enumerate(_events(body, reply)):
                    if reply.cut_after == sent:
                        return
                    if sent in reply.interleave:
                        self.wfile.write(reply.interleave[sent])
                    if name in reply.leave_out:
                        continue
                    if reply.error_event is not None and name == "message_delta":
                        data = _error(reply.error_event, "overloaded mid-stream")
                        name = "error"
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
                    if name == "error":
                        return

        return Handler


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _refusal(body: dict[str, Any]) -> str:
    """What the real API would refuse in this request, or ``""``."""
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    choice = body.get("tool_choice")
    if choice is not None:
        names = [tool.get("name") for tool in body.get("tools") or []]
        if choice.get("type") not in ("auto", "any", "tool", "none"):
            return "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'"
        if choice["type"] in ("any", "tool") and not names:
            return "tool_choice: a tool choice of 'any' or 'tool' requires tools"
        if choice["type"] == "tool" and choice.get("name") not in names:
            return f"tool_choice.name: no tool named {choice.get('name')!r}"
    turns = body.get("messages", [])
    previous_uses: set[str] = set()
    all_uses: set[str] = set()
    for number, turn in enumerate(turns):
        if number and turns[number - 1]["role"] == turn["role"]:
            return f"messages.{number}: roles must alternate between user and assistant"
        content = turn["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for place, block in enumerate(blocks):
            if block["type"] == "tool_use":
                if block["id"] in all_uses:
                    return f"messages.{number}.content.{place}: `tool_use` ids must be unique"
                all_uses.add(block["id"])
            if block["type"] == "text" and not block["text"]:
                return f"messages.{number}: text content blocks must be non-empty"
            if block["type"] == "tool_use" and not isinstance(block.get("input"), dict):
                return f"messages.{number}: tool_use.input: Input should be an object"
            if block["type"] == "tool_result" and block["tool_use_id"] not in previous_uses:
                return f"messages.{number}: unexpected tool_use_id {block['tool_use_id']!r}"
            inner = block.get("content") if block["type"] == "tool_result" else [block]
            for part in inner if isinstance(inner, list) else []:
                problem = _image_refusal(part, turn["role"], f"messages.{number}.content.{place}")
                if problem:
                    return problem
        previous_uses = {b["id"] for b in blocks if b["type"] == "tool_use"}
    return ""


_MEDIA_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}


def _image_refusal(block: dict[str, Any], role: str, where: str) -> str:
    if block.get("type") == "text" and not block.get("text"):
        return f"{where}: text content blocks must be non-empty"
    if block.get("type") != "image":
        return ""
    if role != "user":
        return f"{where}: image blocks are only allowed in user turns"
    source = block.get("source") or {}
    if source.get("type") != "base64" or source.get("media_type") not in _MEDIA_TYPES:
        return f"{where}.source: expected a base64 source of a PNG, JPEG, GIF or WebP image"
    try:
        base64.b64decode(source.get("data", ""), validate=True)
    except ValueError:
        return f"{where}.source.data: the image cannot be decoded"
    return ""


def received_images(body: dict[str, Any]) -> list[tuple[str, str, bytes]]:
    """The images a request held, in order: (``user`` or ``tool_result``, media type, bytes)."""
    found = []
    for turn in body.get("messages", []):
        content = turn["content"]
        for block in content if isinstance(content, list) else []:
            inner = block.get("content") if block["type"] == "tool_result" else [block]
            for part in inner if isinstance(inner, list) else []:
                if part.get("type") == "image":
                    where = "tool_result" if block["type"] == "tool_result" else "user"
                    source = part["source"]
                    found.append((where, source["media_type"], base64.b64decode(source["data"])))
    return found


def _usage(reply: Reply) -> dict[str, int]:
    uncached, output, read, created = reply.usage
    return {
        "input_tokens": uncached,
        "output_tokens": output,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": created,
    }


def _stop(reply: Reply) -> str:
    return reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn")


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for number, (name, raw) in enumerate(reply.tool_calls):
        blocks.append(
            {"type": "tool_use", "id": f"toolu_{number}", "name": name, "input": json.loads(raw)}
        )
    return blocks


def _message(body: dict[str, Any], reply: Reply, *, whole: bool = True) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": _blocks(reply) if whole else [],
        "stop_reason": _stop(reply) if whole else None,
        "stop_sequence": None,
        "usage": _usage(reply),
    }


def _events(body: dict[str, Any], reply: Reply) -> Iterator[tuple[str, dict[str, Any]]]:
    start = _message(body, reply, whole=False)
    start["usage"] = {**_usage(reply), "output_tokens": 1}
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    index = 0
    if reply.text:
        yield "content_block_start", _block_start(index, {"type": "text", "text": ""})
        for piece in re.findall(r"\S+\s*|\s+", reply.text):
            yield "content_block_delta", _delta(index, {"type": "text_delta", "text": piece})
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    for number, (name, raw) in enumerate(reply.tool_calls):
        block = {"type": "tool_use", "id": f"toolu_{number}", "name": name, "input": {}}
        yield "content_block_start", _block_start(index, block)
        half = len(raw) // 2
        for part in (raw[:half], raw[half:]):
            yield (
                "content_block_delta",
                _delta(index, {"type": "input_json_delta", "partial_json": part}),
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    delta = {"type": "message_delta", "delta": {"stop_reason": _stop(reply), "stop_sequence": None}}
    yield "message_delta", {**delta, "usage": {"output_tokens": reply.usage[1]}}
    yield "message_stop", {"type": "message_stop"}


def _block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}
