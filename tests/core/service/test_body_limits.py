"""Request bodies: the token is checked before one is read, and each has a time limit.

Over raw sockets to a real server, as a client that never finishes its body, or sends it a
byte at a time, would talk to it.
"""

import asyncio
import json
import socket
import threading

from neta.providers.scripted import ScriptedProvider
from tests import http_clients
from tests.core.hosting.server_harness import drive, open_client

TOKEN = "body-token"
DECLARED = 960 * 1024  # the size the unfinished bodies of the load campaign declared


def _head(port, path, length, *, token=None, expect=False):
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        f"Content-Length: {length}",
    ]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    if expect:
        lines.append("Expect: 100-continue")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _json_body(received):
    return json.loads(received.partition(b"\r\n\r\n")[2])


def test_a_request_without_the_token_is_refused_before_its_body_arrives(serve):
    server = serve([{"text": "never"}], token=TOKEN)
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as raw:
        raw.sendall(_head(server.port, "/v1/sessions", DECLARED) + b"{" + b"x" * 1024)
        received = http_clients.answer_and_close(raw)  # the rest of the body never comes
    assert http_clients.status_of(received) == 401
    assert b"www-authenticate: bearer" in received.lower()
    assert _json_body(received) == {"detail": "missing or wrong token"}


def test_a_refused_body_is_not_read_past_a_small_budget(serve):
    huge = 48 << 20
    server = serve([{"text": "never"}], token=TOKEN, max_frame_bytes=64 << 20)  # within it
    sent = 0
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as raw:
        raw.sendall(_head(server.port, "/v1/sessions", huge, token="wrong"))
        chunk = b"x" * (1 << 20)
        try:
            while sent < huge:
                raw.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
    # the server stopped reading (and closed) long before the body's end
    assert sent < huge // 2


def test_a_refused_client_that_waits_to_continue_is_answered_without_sending_its_body(serve):
    server = serve([{"text": "never"}], token=TOKEN)
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as raw:
        raw.sendall(_head(server.port, "/v1/sessions", DECLARED, expect=True))
        received = http_clients.answer_and_close(raw)
    assert http_clients.status_of(received) == 401  # not "100 Continue"


def test_an_authorized_body_that_stops_arriving_gets_408_and_the_connection_closes(serve):
    server = serve([{"text": "never"}], token=TOKEN, body_timeout=0.5)
    with http_clients.client(base_url=server.http, timeout=30) as http:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        sid = http.post("/v1/sessions", headers=headers).json()["sessionId"]
    path = f"/v1/sessions/{sid}/messages"
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as raw:
        raw.sendall(_head(server.port, path, DECLARED, token=TOKEN) + b'{"text": "')
        received = http_clients.answer_and_close(raw)
    assert http_clients.status_of(received) == 408
    assert _json_body(received)["code"] == "body_timeout"
    assert "within 0.5 s" in _json_body(received)["detail"]


def test_a_body_sent_a_byte_at_a_time_is_cut_off_at_the_total_limit(serve):
    # Each byte comes well within any per-read timeout; only a limit on the whole body holds.
    server = serve([{"text": "never"}], token=TOKEN, body_timeout=0.5)
    declared = 100_000
    sent = []
    answered = threading.Event()

    def dribble(raw):
        try:
            while not answered.wait(0.02) and len(sent) < declared:
                raw.sendall(b"x")
                sent.append(1)
        except OSError:
            pass

    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as raw:
        raw.sendall(_head(server.port, "/v1/sessions", declared, token=TOKEN))
        sender = threading.Thread(target=dribble, args=(raw,))
        sender.start()
        try:
            received = http_clients.answer_and_close(raw)
        finally:
            answered.set()
            sender.join()
    assert http_clients.status_of(received) == 408
    assert len(sent) < declared


def test_an_authorized_body_sent_in_pieces_within_the_limit_is_served(serve):
    model = ScriptedProvider([{"text": "served"}])
    server = serve([], provider_factory=lambda: model, token=TOKEN, body_timeout=30)
    with http_clients.client(base_url=server.http, timeout=30) as http:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        sid = http.post("/v1/sessions", headers=headers).json()["sessionId"]

        def pieces():
            yield b'{"text": '
            yield b'"hi"}'

        reply = http.post(
            f"/v1/sessions/{sid}/messages",
            content=pieces(),
            headers={**headers, "content-type": "application/json"},
        )
    assert reply.status_code == 200, reply.text
    assert reply.json()["reply"] == "served"


def test_a_websocket_connection_outlives_the_body_time_limit(serve):
    server = serve([{"text": "hi"}], token=TOKEN, body_timeout=0.2)

    async def scenario():
        client, ready = await open_client(server.ws_url(token=TOKEN))
        await asyncio.sleep(0.5)
        await client.send("ping", ready["data"]["sessionId"])
        assert (await client.next())["type"] == "pong"
        await client.send("user_message", ready["data"]["sessionId"], text="hello")
        finished = await client.until("run_finished")
        assert finished["data"]["outcome"] == "completed"

    drive(scenario())
