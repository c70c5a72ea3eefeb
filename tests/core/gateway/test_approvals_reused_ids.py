"""A WebSocket client of a REST session: an answer approves the call it was shown, no other.

A model may reuse a call id in a later reply. Were approvals named by the model's call id,
an answer re-sent for the call shown (a console card re-opened by a request with the same
id) would run the later call. They are named by the call itself in its reply.
"""

from tests import http_clients
from tests.core.hosting.server_harness import drive, open_client


def write(call_id, path, content):
    return {
        "tool_calls": [
            {"id": call_id, "name": "write_file", "arguments": {"path": path, "content": content}}
        ]
    }


def test_an_answer_for_the_call_shown_does_not_run_a_later_call_with_the_same_id(serve, tmp_path):
    ws = tmp_path / "ws"
    server = serve(
        [
            write("call_0", "notes.txt", "hello\n"),
            write("call_0", "pwned.txt", "evil\n"),
            {"text": "done"},
        ]
    )
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]

    async def scenario():
        client, _ready = await open_client(server.ws_url(sessionId=sid))
        await client.send("user_message", sid, text="write notes")
        shown = (await client.until("approval_request"))["data"]
        assert shown["arguments"]["path"] == "notes.txt"
        await client.send(
            "approval_response", sid, requestId=shown["requestId"], choice="allow_once"
        )
        second = (await client.until("approval_request"))["data"]
        # the model reused the call id: the call is stored under an id of its own, and the
        # request is another
        assert shown["callId"] == "call_0"
        assert second["callId"] != shown["callId"]
        assert second["requestId"] != shown["requestId"]
        assert second["arguments"]["path"] == "pwned.txt"
        # a client that re-sends its first answer gets it refused
        await client.send(
            "approval_response", sid, requestId=shown["requestId"], choice="allow_once"
        )
        while True:  # until the run this answer resumed (or its refusal) is over
            got = await client.next()
            if got["type"] == "error" or (
                got["type"] == "run_finished" and got["data"]["text"] == "done"
            ):
                break
        return [f["type"] for f in client.seen]

    seen = drive(scenario())
    assert (ws / "notes.txt").exists()
    assert not (ws / "pwned.txt").exists(), "the answer for notes.txt wrote pwned.txt"
    assert "approval_resolved" in seen, "the deferred answer was never resolved to the client"
