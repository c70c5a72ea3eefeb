"""The server attacked as an outsider and as another client, each over a real connection.

A real uvicorn server on 127.0.0.1 with a token and scripted models; raw sockets where an
HTTP client would refuse to send what an attacker sends. Each test states the defence.
"""

import socket
import threading

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests import http_clients
from tests.core.console.harness import KeywordScripts
from tests.core.hosting.server_harness import drive, open_client

TOKEN = "attack-token"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


def _call(name, **arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _raw(port, head, body=b""):
    """Send ``head`` (lines without the request's end) and ``body``; everything answered."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(head.encode("latin-1") + b"\r\nConnection: close\r\n\r\n" + body)
        return http_clients.answer_and_close(sock)


def test_every_answer_of_the_api_is_kept_out_of_caches(serve):
    """A session's history holds what its tools read; no browser or proxy may keep a copy
    (a token given as ``?token=`` leaves no ``Authorization`` header to keep shared caches
    off)."""
    server = serve([{"text": "hi"}], token=TOKEN)
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions", headers=BEARER).json()["sessionId"]
        answers = [
            http.get(f"/v1/sessions/{sid}?token={TOKEN}"),
            http.post(f"/v1/sessions/{sid}/messages?token={TOKEN}", json={"text": "hello"}),
            http.get(f"/openapi.json?token={TOKEN}"),
            http.get(f"/v1/sessions/{sid}"),  # refused
            http.get(f"/v1/sessions/nothing?token={TOKEN}"),  # unknown
        ]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 401, 404]
    for answer in answers:
        assert answer.headers["cache-control"] == "no-store", answer.request.url


def test_duplicated_authorization_headers_are_read_alike_by_the_body_gate_and_the_routes(serve):
    """The first ``Authorization`` header is the one every check reads: a wrong one first
    cannot be passed off with a right one after it, with or without a body."""
    server = serve([{"text": "hi"}], token=TOKEN)
    port = server.port
    right, wrong = f"Authorization: Bearer {TOKEN}", "Authorization: Bearer wrong"
    for first, second, status in ((wrong, right, 401), (right, wrong, 404)):
        read = f"GET /v1/sessions/nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n{first}\r\n{second}"
        assert http_clients.status_of(_raw(port, read)) == status
        sent = (
            "POST /v1/sessions/nothing/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/json\r\nContent-Length: 13\r\n{first}\r\n{second}"
        )
        assert http_clients.status_of(_raw(port, sent, b'{"text":"x"}\n')) == status


def test_the_metrics_token_opens_no_websocket_and_no_console_secret(serve):
    server = serve([{"text": "hi"}], token=TOKEN, metrics_token="scraper-token")

    async def scenario():
        for query in ({"token": "scraper-token"}, {}):
            with pytest.raises(InvalidStatus) as refused:
                await connect(server.ws_url(**query))
            assert refused.value.response.status_code == 403

    drive(scenario())
    config = http_clients.get(
        f"{server.http}/console/config.json", headers={"Authorization": "Bearer scraper-token"}
    ).json()
    assert "workspacePath" not in config
    assert server.hub._live == {}


def test_many_slow_bodies_at_once_each_get_408_while_other_clients_are_served(serve):
    server = serve([{"text": "hi"}] * 5, token=TOKEN, body_timeout=0.5)
    head = (
        "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: 100\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
    ).encode()
    answers: list[bytes] = []
    started = threading.Barrier(41)

    def trickle():
        with socket.create_connection(("127.0.0.1", server.port), timeout=20) as sock:
            sock.sendall(head + b"{")
            started.wait()
            received = b""
            try:
                while chunk := sock.recv(65536):
                    received += chunk
            except ConnectionResetError:
                pass
            answers.append(received)

    threads = [threading.Thread(target=trickle) for _ in range(40)]
    for thread in threads:
        thread.start()
    started.wait()
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions", headers=BEARER).json()["sessionId"]
        reply = http.post(f"/v1/sessions/{sid}/messages", headers=BEARER, json={"text": "hi"})
    assert reply.json()["reply"] == "hi"
    for thread in threads:
        thread.join(timeout=20)
    assert [http_clients.status_of(answer) for answer in answers] == [408] * 40


def test_a_rest_body_nested_too_deeply_is_refused_and_the_server_goes_on(serve):
    server = serve([{"text": "hi"}], token=TOKEN)
    nested = b'{"text": "x", "approvals": {"a": ' + b"[" * 200_000 + b"]" * 200_000 + b"}}"
    with http_clients.client(base_url=server.http, headers=BEARER, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        url = f"/v1/sessions/{sid}/messages"
        refused = http.post(url, content=nested, headers={"Content-Type": "application/json"})
        assert (refused.status_code, refused.json()["code"]) == (400, "invalid_json")
        assert "Traceback" not in refused.text
        assert http.post(url, json={"text": "hi"}).json()["reply"] == "hi"


SCRIPTS = {
    key: [_call("write_file", path=f"{key}.txt", content=key), {"text": f"{key} written"}]
    for key in ("alpha", "beta")
}


def test_no_client_of_another_session_can_answer_a_rest_call_waiting_for_approval(serve):
    """A call a REST run left waiting is answered by its session only: another session's
    request (REST) or connection (WebSocket) naming its id gets ``unknown_request``, and the
    call still waits, unmade, for its own session's answer."""
    server = serve([], token=TOKEN, provider_factory=lambda: KeywordScripts(SCRIPTS))
    workspace = server.hub.config.workspace
    with http_clients.client(base_url=server.http, headers=BEARER, timeout=30) as http:
        waiting = {}
        for key in SCRIPTS:
            sid = http.post("/v1/sessions").json()["sessionId"]
            [asked] = http.post(f"/v1/sessions/{sid}/messages", json={"text": key}).json()[
                "approvals"
            ]
            waiting[key] = (sid, asked["requestId"])
        (alpha, alpha_request), (beta, beta_request) = waiting["alpha"], waiting["beta"]
        assert alpha_request != beta_request

        spoof = {"approvals": {beta_request: {"choice": "allow_once"}}}
        refused = http.post(f"/v1/sessions/{alpha}/messages", json=spoof)
        assert (refused.status_code, refused.json()["code"]) == (404, "unknown_request")

        async def over_websocket():
            intruder, _ = await open_client(server.ws_url(token=TOKEN, sessionId=alpha))
            await intruder.send("approval_response", requestId=beta_request, choice="allow_once")
            error = await intruder.until("error")
            assert error["data"]["code"] == "unknown_request"
            await intruder.ws.close()

        drive(over_websocket())
        assert not (workspace / "beta.txt").exists()

        answer = {"approvals": {beta_request: {"choice": "allow_once"}}}
        done = http.post(f"/v1/sessions/{beta}/messages", json=answer).json()
        assert done["reply"] == "beta written"
        assert (workspace / "beta.txt").read_text() == "beta"
        assert not (workspace / "alpha.txt").exists()  # alpha's call still waits
        assert http.get(f"/v1/sessions/{alpha}").json()["running"] is False


def test_an_unknown_id_however_long_is_named_briefly_in_the_refusal(serve):
    """An id nobody issued comes back in the error shortened: a client sending 200,000
    characters does not get them echoed (over REST and over WebSocket)."""
    server = serve([{"text": "hi"}], token=TOKEN)
    huge = "q" * 200_000
    with http_clients.client(base_url=server.http, headers=BEARER, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        approval = {"approvals": {huge: {"choice": "deny"}}}
        answers = [
            (http.post(f"/v1/sessions/{sid}/messages", json=approval), "unknown_request", huge),
            (http.get(f"/v1/sessions/{huge[:20_000]}"), "unknown_session", huge[:20_000]),
        ]
        for answer, code, sent in answers:
            assert (answer.status_code, answer.json()["code"]) == (404, code)
            assert len(answer.content) < 1000
            assert f"{len(sent)} characters" in answer.json()["detail"]

    async def over_websocket():
        client, _ = await open_client(server.ws_url(token=TOKEN))
        await client.send("clarify_response", requestId=huge, answer="x")
        error = await client.until("error")
        assert error["data"]["code"] == "unknown_request"
        assert len(error["data"]["message"]) < 500
        await client.ws.close()

    drive(over_websocket())
