"""An approval pending when the server restarts: the client is told, the call did not run."""

from neta.hosting.clarify_bridge import APPROVAL_RESTART_NOTE
from tests import http_clients
from tests.core.approval_edit import BEFORE, PATCH
from tests.core.hosting.server_harness import drive, open_client


def test_an_approval_pending_at_a_restart_is_resolved_as_server_restarted_and_never_runs(
    serve, app_py
):
    server = serve([PATCH, {"text": "never"}])

    async def ask_and_leave():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="say hello")
        rid = (await client.until("approval_request"))["data"]["requestId"]
        await client.ws.close()  # the approval survives a disconnect...
        return sid, rid

    sid, rid = drive(ask_and_leave())
    assert server.hub.store.pending_questions(sid)[0].approval["requestId"] == rid
    server.stop()  # ...but not a restart

    again = serve([{"text": "I will ask again.", "expect": {"last_message_contains": "try again"}}])

    async def reconnect():
        client, ready = await open_client(again.ws_url(sessionId=sid))
        assert ready["data"]["pendingApprovals"] == []
        resolved = await client.next()
        assert resolved["type"] == "approval_resolved"
        assert resolved["data"] == {"requestId": rid, "outcome": "server_restarted", "choice": None}
        await client.send("approval_response", sid, requestId=rid, choice="allow_once")
        refused = await client.next()
        assert refused["data"]["code"] == "expired"
        await client.send("user_message", sid, text="try again")
        finished = await client.until("run_finished")
        assert finished["data"]["outcome"] == "completed", finished["data"]["reason"]

    drive(reconnect())
    with http_clients.client(base_url=again.http, timeout=30) as http:
        messages = http.get(f"/v1/sessions/{sid}").json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user", "assistant"]
    assert messages[2]["content"] == APPROVAL_RESTART_NOTE
    assert messages[2]["is_error"] is True
    assert app_py.read_text() == BEFORE
