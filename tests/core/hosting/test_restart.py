"""A question pending when the server restarts: the client is told, the history notes it."""

import time

from neta.hosting.store import StoredQuestion
from neta.hosting.store.sqlite import SqliteStore
from neta.messages import Message
from neta.tools import ToolCall
from tests import http_clients
from tests.core.hosting.server_harness import ASK, drive, open_client


def ask_and_leave(server):
    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="paint it")
        rid = (await client.until("clarify_request"))["data"]["requestId"]
        await client.ws.close()  # the question survives a disconnect...
        return sid, rid

    return drive(scenario())


def test_a_question_pending_at_a_restart_is_resolved_as_server_restarted(serve):
    server = serve([ASK, {"text": "never"}])
    sid, rid = ask_and_leave(server)
    server.stop()  # ...but not a restart

    again = serve([{"text": "Green, noted.", "expect": {"last_message_contains": "green"}}])

    async def reconnect():
        client, ready = await open_client(again.ws_url(sessionId=sid))
        assert ready["data"]["pendingClarify"] == []
        resolved = await client.next()
        assert resolved["type"] == "clarify_resolved"
        assert resolved["data"] == {"requestId": rid, "outcome": "server_restarted"}
        await client.send("clarify_response", sid, requestId=rid, answer="green")
        refused = await client.next()
        assert refused["data"]["code"] == "expired"
        assert "restart" in refused["data"]["message"]
        await client.send("user_message", sid, text="green")
        finished = await client.until("run_finished")
        assert finished["data"]["outcome"] == "completed", finished["data"]["reason"]

    drive(reconnect())
    with http_clients.client(base_url=again.http, timeout=30) as http:
        messages = http.get(f"/v1/sessions/{sid}").json()["messages"]
    note = next(m for m in messages if m["role"] == "tool")
    assert "server restarted" in note["content"]
    assert "Which colour?" in note["content"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user", "assistant"]


def test_a_question_left_by_a_crashed_server_is_noted_and_told_at_start(serve, tmp_path):
    # what kill -9 leaves: the history up to the question, the question, an expiring lease
    store = SqliteStore(tmp_path / "home" / "neta.db")
    store.create("s1", "gateway")
    assert store.acquire("s1", "crashed-server", ttl=0.05)
    asked = ToolCall(id="call_1", name="clarify", arguments='{"question": "Which colour?"}')
    history = [
        Message(role="user", content="paint it"),
        Message(role="assistant", content=None, tool_calls=[asked]),
    ]
    store.save("s1", history, owner="crashed-server")
    store.add_question(StoredQuestion("r1", "s1", "Which colour?", ["red", "blue"]))
    store.close()
    time.sleep(0.1)

    again = serve([{"text": "Red.", "expect": {"last_message_contains": "red"}}])
    with http_clients.client(base_url=again.http, timeout=30) as http:
        messages = http.get("/v1/sessions/s1").json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert "server restarted" in messages[2]["content"]

    async def reconnect():
        client, ready = await open_client(again.ws_url(sessionId="s1"))
        assert ready["data"]["pendingClarify"] == []
        resolved = await client.next()
        assert resolved["data"] == {"requestId": "r1", "outcome": "server_restarted"}
        await client.send("user_message", "s1", text="red")
        finished = await client.until("run_finished")
        assert finished["data"]["outcome"] == "completed", finished["data"]["reason"]

    drive(reconnect())
