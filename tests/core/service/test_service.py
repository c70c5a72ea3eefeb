"""The REST service and persistence, over a real uvicorn server and an HTTP client."""

import asyncio
import socket

import httpx

from neta.hosting.config import HostConfig
from neta.hosting.hub import SessionHub
from neta.hosting.store import StoredQuestion
from neta.hosting.store.sqlite import SqliteStore
from neta.providers.scripted import ScriptedProvider
from tests import http_clients
from tests.core.hosting.server_harness import (
    ASK,
    ExplodingOnce,
    builtin_pm,
    drive,
    open_client,
    wait_until,
)

ASK_REST = {
    "tool_calls": [
        {"name": "clarify", "arguments": {"question": "Which file?", "choices": ["a.txt", "b.txt"]}}
    ]
}


def test_rest_clarify_degrades_and_the_next_message_answers(serve):
    server = serve(
        [
            ASK_REST,
            {"text": "Editing b.txt.", "expect": {"last_message_contains": "b.txt please"}},
        ]
    )
    with http_clients.client(base_url=server.http, timeout=30) as http:
        created = http.post("/v1/sessions")
        assert created.status_code == 201
        sid = created.json()["sessionId"]
        first = http.post(f"/v1/sessions/{sid}/messages", json={"text": "edit the file"}).json()
        assert first["outcome"] == "awaiting_input"
        assert first["reply"].startswith("[clarify] Question: Which file?")
        assert "a.txt" in first["reply"]
        assert "b.txt" in first["reply"]
        second = http.post(f"/v1/sessions/{sid}/messages", json={"text": "b.txt please"}).json()
        assert second["outcome"] == "completed"
        assert second["reply"] == "Editing b.txt."
        session = http.get(f"/v1/sessions/{sid}").json()
        roles = [m["role"] for m in session["messages"]]
        assert roles == ["user", "assistant", "tool", "user", "assistant"]


def test_rest_offers_patch_and_a_degraded_clarify(serve):
    server = serve([{"text": "ok", "expect": {"tools_include": ["patch", "clarify", "todo"]}}])
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        reply = http.post(f"/v1/sessions/{sid}/messages", json={"text": "hi"}).json()
    assert reply["outcome"] == "completed", reply["reason"]


def test_rest_returns_todos_and_events(serve):
    plan = {
        "tool_calls": [
            {
                "name": "todo",
                "arguments": {
                    "todos": [{"id": "1", "content": "Write tests", "status": "in_progress"}]
                },
            }
        ]
    }
    server = serve([plan, {"text": "planned"}])
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        reply = http.post(f"/v1/sessions/{sid}/messages", json={"text": "plan"}).json()
        assert [t["content"] for t in reply["todos"]] == ["Write tests"]
        assert "todo_update" in [e["type"] for e in reply["events"]]
        assert http.get(f"/v1/sessions/{sid}").json()["todos"][0]["status"] == "in_progress"


def test_rest_unknown_session_is_404_and_empty_text_is_422(serve):
    server = serve([{"text": "x"}])
    with http_clients.client(base_url=server.http, timeout=30) as http:
        assert http.get("/v1/sessions/nope").status_code == 404
        sid = http.post("/v1/sessions").json()["sessionId"]
        assert http.post(f"/v1/sessions/{sid}/messages", json={"text": ""}).status_code == 422
        assert "/v1/sessions" in http.get("/openapi.json").json()["paths"]


def test_rest_token_is_checked(serve):
    server = serve([{"text": "x"}], token="tok")
    with http_clients.client(base_url=server.http, timeout=30) as http:
        assert http.post("/v1/sessions").status_code == 401
        assert http.post("/v1/sessions", headers={"Authorization": "Bearer bad"}).status_code == 401
        assert server.hub._live == {}
        ok = http.post("/v1/sessions", headers={"Authorization": "Bearer tok"})
        assert ok.status_code == 201


def test_restart_with_the_same_home_keeps_the_history(serve):
    turns = [{"text": "first answer"}, {"text": "second answer"}]
    server = serve(turns)
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        http.post(f"/v1/sessions/{sid}/messages", json={"text": "remember me"})
    server.stop()

    again = serve([{"text": "I remember.", "expect": {"last_message_contains": "still there?"}}])
    with http_clients.client(base_url=again.http, timeout=30) as http:
        history = http.get(f"/v1/sessions/{sid}").json()["messages"]
        assert [m["content"] for m in history] == ["remember me", "first answer"]
        reply = http.post(f"/v1/sessions/{sid}/messages", json={"text": "still there?"}).json()
        assert reply["reply"] == "I remember."
        assert len(http.get(f"/v1/sessions/{sid}").json()["messages"]) == 4


def test_question_pending_at_restart_is_noted_and_the_rest_session_continues(serve):
    server = serve([ASK, {"text": "never"}])

    async def ask():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="paint it")
        await client.until("clarify_request")
        await client.ws.close()
        return sid

    sid = drive(ask())
    server.stop()

    again = serve([{"text": "Green, noted.", "expect": {"last_message_contains": "green"}}])
    assert len(again.hub.questions) == 0  # nothing waits on a question nobody can answer live
    with http_clients.client(base_url=again.http, timeout=30) as http:
        reply = http.post(f"/v1/sessions/{sid}/messages", json={"text": "green"}).json()
        assert reply["outcome"] == "completed", reply["reason"]
        messages = http.get(f"/v1/sessions/{sid}").json()["messages"]
    clarify_result = next(m for m in messages if m["role"] == "tool")
    assert "server restarted" in clarify_result["content"]


def test_deleting_a_session_leaves_no_question_or_task_behind(serve):
    server = serve([ASK, {"text": "never"}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="go")
        rid = (await client.until("clarify_request"))["data"]["requestId"]
        live = server.hub._live[sid]
        async with http_clients.async_client(base_url=server.http) as http:
            assert (await http.delete(f"/v1/sessions/{sid}")).status_code == 204
        resolved = await client.until("clarify_resolved")
        assert resolved["data"] == {"requestId": rid, "outcome": "cancelled"}
        assert live.run.done()
        assert sid not in server.hub._live
        assert len(server.hub.questions) == 0
        async with http_clients.async_client(base_url=server.http) as http:
            assert (await http.get(f"/v1/sessions/{sid}")).status_code == 404

    drive(scenario())


def test_question_left_in_the_store_by_a_crash_is_lost_at_start(tmp_path):
    home = tmp_path / "home"
    store = SqliteStore(home / "neta.db")
    store.create("s1", "gateway")
    store.add_question(StoredQuestion("r1", "s1", "Which?", ["a", "b"]))
    store.close()  # the process died here, the question still pending

    hub = SessionHub(
        HostConfig(
            provider_factory=lambda: ScriptedProvider([]),
            home=home,
            workspace=tmp_path,
            plugin_manager=builtin_pm(),
        )
    )
    try:
        asyncio.run(hub.start())
        assert hub.lost_at_start == [StoredQuestion("r1", "s1", "Which?", ["a", "b"])]
        assert hub.store.lose_questions() == []
        assert hub.pending_questions("s1") == []
    finally:
        hub.store.close()


def test_deleting_a_session_while_a_rest_message_runs_answers_404_and_leaves_nothing(serve):
    server = serve([{"text": "slow", "delay": 2}])

    async def scenario():
        async with http_clients.async_client(base_url=server.http, timeout=10) as http:
            sid = (await http.post("/v1/sessions")).json()["sessionId"]
            message = asyncio.create_task(
                http.post(f"/v1/sessions/{sid}/messages", json={"text": "hi"})
            )
            await wait_until(lambda: sid in server.hub._live and server.hub._live[sid].running)
            assert (await http.delete(f"/v1/sessions/{sid}")).status_code == 204
            reply = await message
            assert reply.status_code == 404, reply.text
            assert (await http.get(f"/v1/sessions/{sid}")).status_code == 404
            assert (await http.delete(f"/v1/sessions/{sid}")).status_code == 404
        assert server.hub._live == {}
        assert server.hub.store.load(sid) is None

    drive(scenario())


def test_rest_message_on_a_gateway_session_while_its_websocket_run_runs_is_409(serve):
    server = serve([{"text": "slow", "delay": 0.5}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="one")
        await client.until("run_started")
        async with http_clients.async_client(base_url=server.http, timeout=10) as http:
            busy = await http.post(f"/v1/sessions/{sid}/messages", json={"text": "two"})
            assert busy.status_code == 409
            assert (await http.get(f"/v1/sessions/{sid}")).json()["running"] is True
        assert (await client.until("run_finished"))["data"]["text"] == "slow"

    drive(scenario())


def test_idle_sessions_leave_memory_but_not_the_disk(serve):
    server = serve([{"text": "hello"}], max_idle_sessions=2)
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sids = [http.post("/v1/sessions").json()["sessionId"] for _ in range(5)]
        for sid in sids:
            reply = http.post(f"/v1/sessions/{sid}/messages", json={"text": "hi"}).json()
            assert reply["reply"] == "hello"
        assert len(server.hub._live) <= 2
        for sid in sids:
            session = http.get(f"/v1/sessions/{sid}").json()
            assert [m["content"] for m in session["messages"]] == ["hi", "hello"]
        assert len(server.hub._live) <= 2
        again = http.post(f"/v1/sessions/{sids[0]}/messages", json={"text": "and?"}).json()
        assert again["outcome"] == "completed"
        messages = http.get(f"/v1/sessions/{sids[0]}").json()["messages"]
        assert [m["content"] for m in messages] == ["hi", "hello", "and?", "hello"]


def test_rest_run_that_fails_with_a_bug_is_outcome_error_not_a_500(serve):
    server = serve([], provider_factory=lambda: ExplodingOnce([{"text": "recovered"}]))
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        failed = http.post(f"/v1/sessions/{sid}/messages", json={"text": "hi"})
        assert failed.status_code == 200
        assert failed.json()["outcome"] == "error"
        assert "boom" in failed.json()["reason"]
        again = http.post(f"/v1/sessions/{sid}/messages", json={"text": "hi"}).json()
        assert again["reply"] == "recovered"


def test_rest_refuses_text_that_cannot_be_stored_and_pages_of_other_sites(serve):
    server = serve([{"text": "x"}])
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        bad = http.post(
            f"/v1/sessions/{sid}/messages",
            content='{"text": "\\ud800"}',
            headers={"Content-Type": "application/json"},
        )
        assert bad.status_code == 422
        assert http.get(f"/v1/sessions/{sid}").json()["messages"] == []
        foreign = http.post("/v1/sessions", headers={"Origin": "http://evil.example"})
        assert foreign.status_code == 403
        local = http.post("/v1/sessions", headers={"Origin": f"http://127.0.0.1:{server.port}"})
        assert local.status_code == 201


def test_rest_body_over_the_frame_limit_is_413_and_runs_nothing(serve):
    server = serve([{"text": "never"}], max_frame_bytes=64 * 1024)
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        big = http.post(f"/v1/sessions/{sid}/messages", json={"text": "x" * (100 * 1024)})
        assert big.status_code == 413
        assert "exceeds the 65536-byte limit" in big.json()["detail"]
        assert http.get(f"/v1/sessions/{sid}").json()["messages"] == []
        small = http.post(f"/v1/sessions/{sid}/messages", json={"text": "hi"})
        assert small.json()["reply"] == "never"


def test_client_that_sends_its_whole_oversized_body_reads_the_413_not_a_reset(serve):
    # Closing a connection with unread request bytes resets it, and the reset can destroy the
    # 413 before the client reads it; the server reads and drops the body first.
    server = serve([{"text": "never"}], max_frame_bytes=64 * 1024)
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
    body = b'{"text": "' + b"x" * (1024 * 1024) + b'"}'
    head = (
        f"POST /v1/sessions/{sid}/messages HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    received = b""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        raw.sendall(head + body)
        while chunk := raw.recv(65536):
            received += chunk
    assert received.startswith(b"HTTP/1.1 413")
    assert b"frame_too_large" in received


def test_chunked_rest_body_over_the_limit_is_413_as_it_streams_and_runs_nothing(serve):
    model = ScriptedProvider([{"text": "never"}])
    server = serve([], provider_factory=lambda: model, max_frame_bytes=64 * 1024)
    sent = []

    def body():
        yield b'{"text": "'
        for _ in range(4096):  # 16 MiB, without a Content-Length
            sent.append(4096)
            yield b"x" * 4096
        yield b'"}'

    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        try:
            big = http.post(
                f"/v1/sessions/{sid}/messages",
                content=body(),
                headers={"content-type": "application/json"},
            )
        except httpx.TransportError:  # the server may close before the client is done sending
            big = None
        if big is not None:
            assert big.status_code == 413
            assert big.json()["code"] == "frame_too_large"
        assert sum(sent) < 16 * 1024 * 1024  # the server stopped reading long before the end
        assert http.get(f"/v1/sessions/{sid}").json()["messages"] == []
    assert model.remaining == 1


def test_message_text_has_a_maximum_length_on_rest_and_websocket(serve):
    from neta.hosting.protocol import MAX_TEXT_CHARS

    model = ScriptedProvider([{"text": "never"}])
    server = serve([], provider_factory=lambda: model, max_frame_bytes=4 * MAX_TEXT_CHARS)
    too_long = "y" * (MAX_TEXT_CHARS + 1)
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        refused = http.post(f"/v1/sessions/{sid}/messages", json={"text": too_long})
        assert refused.status_code == 422
        # what was wrong, without the whole refused text echoed back
        assert len(refused.content) < 2000
        [problem] = refused.json()["detail"]
        assert problem["type"] == "string_too_long"
        assert problem["input"].startswith("yyy")
        assert problem["input"].endswith(f"… ({MAX_TEXT_CHARS + 1} characters)")

    async def scenario():
        client, ready = await open_client(server.ws_url())
        await client.send("user_message", ready["data"]["sessionId"], text=too_long)
        error = await client.next()
        assert error["data"]["code"] == "invalid_frame"
        assert "at most" in error["data"]["message"]
        assert len(error["data"]["message"]) < 2000

    drive(scenario())
    assert model.remaining == 1
