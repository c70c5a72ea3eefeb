"""Approvals over the WebSocket gateway: a tool call the rules ask about waits for the client.

A real uvicorn server, a real websockets client, the real ``patch`` tool on a file in the
workspace, and the default mode (``ask``: every edit asks first).
"""

import asyncio

from tests import http_clients
from tests.core.approval_edit import AFTER, BEFORE, PATCH
from tests.core.hosting.server_harness import ASK, drive, open_client, wait_until


def without_agent_id(data):
    return {k: v for k, v in data.items() if k != "agent_id"}


def test_an_edit_runs_only_after_the_client_approves_the_diff_it_was_shown(serve, app_py):
    server = serve([PATCH, {"text": "Patched.", "expect": {"last_message_contains": "app.py"}}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        assert ready["data"]["pendingApprovals"] == []
        await client.send("user_message", sid, text="say hello")
        started = await client.until("tool_call_start")
        request = (await client.until("approval_request"))["data"]
        assert request["tool"] == "patch"
        assert request["effect"] == "writes"
        assert request["callId"] == started["data"]["call_id"]
        assert request["requestId"] != request["callId"]  # unguessable, unlike a call's id
        assert len(request["requestId"]) >= 20
        assert request["arguments"]["path"] == "app.py"
        assert "-    return 'hi'" in request["preview"]
        assert "+    return 'hello'" in request["preview"]
        assert "ask" in request["reason"]
        assert request["always"] == ["patch(/app.py)"]
        assert request["choices"] == ["allow_once", "allow_always", "deny"]
        assert request["title"] == "allow patch to edit?"
        assert app_py.read_text() == BEFORE  # nothing happens before the answer

        await client.send(
            "approval_response", sid, requestId=request["requestId"], choice="allow_once"
        )
        resolved = await client.until("approval_resolved")
        assert resolved["data"] == {
            "requestId": request["requestId"],
            "outcome": "answered",
            "choice": "allow_once",
        }
        decided = (await client.until("permission_decision"))["data"]
        assert (decided["action"], decided["decided_by"]) == ("allow", "user")
        result = (await client.until("tool_result"))["data"]
        assert not result["is_error"], result["content"]
        finished = await client.until("run_finished")
        assert (finished["data"]["outcome"], finished["data"]["text"]) == ("completed", "Patched.")
        assert app_py.read_text() == AFTER

    drive(scenario())


def test_a_denied_edit_leaves_the_file_untouched_and_the_model_reads_the_reason(serve, app_py):
    server = serve(
        [PATCH, {"text": "Understood.", "expect": {"last_message_contains": "keep it short"}}]
    )

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="say hello")
        request = (await client.until("approval_request"))["data"]
        await client.send(
            "approval_response",
            sid,
            requestId=request["requestId"],
            choice="deny",
            reason="keep it short",
        )
        resolved = await client.until("approval_resolved")
        assert (resolved["data"]["outcome"], resolved["data"]["choice"]) == ("answered", "deny")
        result = (await client.until("tool_result"))["data"]
        assert result["is_error"]
        assert result["content"] == "Error: not run: the user denied it: keep it short"
        finished = await client.until("run_finished")
        assert finished["data"]["text"] == "Understood."

    drive(scenario())
    assert app_py.read_text() == BEFORE
    history = asyncio.run(server.hub.view(next(iter(server.hub._live)))).history
    [denied] = [m for m in history if m.role == "tool"]
    assert denied.permission["action"] == "deny"
    assert denied.permission["reason"] == "keep it short"


def test_an_approval_answered_from_another_sessions_connection_is_refused_and_stays_pending(
    serve, app_py
):
    """Refused as an unknown request: whether another session's approval exists is not told."""
    server = serve([PATCH, {"text": "Patched."}])

    async def scenario():
        asker, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await asker.send("user_message", sid, text="go")
        rid = (await asker.until("approval_request"))["data"]["requestId"]

        intruder, other = await open_client(server.ws_url())
        other_id = other["data"]["sessionId"]
        await intruder.send("approval_response", other_id, requestId=rid, choice="allow_once")
        assert (await intruder.until("error"))["data"]["code"] == "unknown_request"
        # claiming the asker's session on this connection does not help either
        await intruder.send("approval_response", sid, requestId=rid, choice="allow_once")
        assert (await intruder.until("error"))["data"]["code"] == "forbidden"
        await intruder.send("clarify_response", other_id, requestId=rid, answer="allow once")
        assert (await intruder.until("error"))["data"]["code"] == "unknown_request"
        assert app_py.read_text() == BEFORE
        assert [q.request_id for q in server.hub.questions.pending_for(sid)] == [rid]

        await asker.send("approval_response", sid, requestId=rid, choice="allow_once")
        assert (await asker.until("run_finished"))["data"]["text"] == "Patched."
        assert [f for f in asker.seen if f["type"] == "error"] == []

    drive(scenario())
    assert app_py.read_text() == AFTER


def test_a_reconnecting_client_finds_the_pending_approval_and_its_diff_in_session_ready(
    serve, app_py
):
    server = serve([PATCH, {"text": "Patched."}])

    async def scenario():
        first, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await first.send("user_message", sid, text="go")
        request = (await first.until("approval_request"))["data"]
        await first.ws.close()
        live = server.hub._live[sid]
        await wait_until(lambda: not live.outboxes)  # the server has seen the client go

        second, again = await open_client(server.ws_url(sessionId=sid))
        assert again["data"]["pendingClarify"] == []
        [pending] = again["data"]["pendingApprovals"]
        assert pending == without_agent_id(request)
        assert "+    return 'hello'" in pending["preview"]
        await second.send(
            "approval_response", sid, requestId=pending["requestId"], choice="allow_once"
        )
        assert (await second.until("approval_resolved"))["data"]["choice"] == "allow_once"
        assert (await second.until("run_finished"))["data"]["text"] == "Patched."

    drive(scenario())
    assert app_py.read_text() == AFTER


def test_bad_approval_answers_get_errors_and_an_answer_in_words_still_works(serve, app_py):
    server = serve([ASK, PATCH, {"text": "Patched."}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="go")
        question = (await client.until("clarify_request"))["data"]["requestId"]
        # a choice is no answer to a question
        await client.send("approval_response", sid, requestId=question, choice="allow_once")
        assert (await client.until("error"))["data"]["code"] == "invalid_answer"
        await client.send("clarify_response", sid, requestId=question, answer="blue")
        rid = (await client.until("approval_request"))["data"]["requestId"]
        for bad in ({"choice": "maybe"}, {"choice": "deny", "reason": 7}, {}):
            await client.send("approval_response", sid, requestId=rid, **bad)
            assert (await client.until("error"))["data"]["code"] == "invalid_frame", bad
        await client.send("approval_response", sid, choice="deny")
        assert (await client.until("error"))["data"]["code"] == "invalid_frame"
        await client.send("approval_response", sid, requestId="no-such-id", choice="deny")
        assert (await client.until("error"))["data"]["code"] == "unknown_request"
        await client.send("ping", sid)
        assert (await client.until("pong"))["type"] == "pong"
        assert app_py.read_text() == BEFORE
        # the answer in words, as a client that only knows questions would send it
        await client.send("clarify_response", sid, requestId=rid, answer="allow once")
        assert (await client.until("approval_resolved"))["data"]["choice"] == "allow_once"
        assert (await client.until("run_finished"))["data"]["text"] == "Patched."
        await client.send("approval_response", sid, requestId=rid, choice="deny")
        assert (await client.until("error"))["data"]["code"] == "already_resolved"

    drive(scenario())
    assert app_py.read_text() == AFTER


def test_an_unanswered_approval_times_out_as_a_denial_and_a_late_answer_is_expired(serve, app_py):
    server = serve(
        [PATCH, {"text": "Left as is.", "expect": {"last_message_contains": "in time"}}],
        clarify_timeout=0.5,
    )

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="go")
        rid = (await client.until("approval_request"))["data"]["requestId"]
        resolved = await client.until("approval_resolved")
        assert resolved["data"] == {"requestId": rid, "outcome": "timed_out", "choice": None}
        decided = (await client.until("permission_decision"))["data"]
        assert (decided["action"], decided["decided_by"]) == ("deny", "timeout")
        assert (await client.until("run_finished"))["data"]["text"] == "Left as is."
        await client.send("approval_response", sid, requestId=rid, choice="allow_once")
        assert (await client.until("error"))["data"]["code"] == "expired"

    drive(scenario())
    assert app_py.read_text() == BEFORE


def test_allow_always_keeps_the_rule_and_the_next_edit_of_the_file_runs_unasked(serve, app_py):
    again = {
        "tool_calls": [
            {
                "name": "patch",
                "arguments": {"path": "app.py", "old_string": "hello", "new_string": "hey"},
            }
        ]
    }
    server = serve([PATCH, again, {"text": "Twice."}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="go")
        rid = (await client.until("approval_request"))["data"]["requestId"]
        await client.send("approval_response", sid, requestId=rid, choice="allow_always")
        assert (await client.until("run_finished"))["data"]["text"] == "Twice."
        asked = [f for f in client.seen if f["type"] == "approval_request"]
        assert len(asked) == 1
        decisions = [f["data"] for f in client.seen if f["type"] == "permission_decision"]
        assert [(d["action"], d["decided_by"]) for d in decisions] == [
            ("allow", "user"),
            ("allow", "rule"),
        ]
        assert "patch(/app.py)" in decisions[1]["rule"]

    drive(scenario())
    assert app_py.read_text() == "def greet():\n    return 'hey'\n"


def test_cancelling_the_run_cancels_its_approval_and_the_call_never_runs(serve, app_py):
    server = serve([PATCH, {"text": "never"}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="go")
        rid = (await client.until("approval_request"))["data"]["requestId"]
        await client.send("cancel_run", sid)
        resolved = await client.until("approval_resolved")
        assert resolved["data"] == {"requestId": rid, "outcome": "cancelled", "choice": None}
        assert (await client.until("run_finished"))["data"]["outcome"] == "cancelled"
        await client.send("approval_response", sid, requestId=rid, choice="allow_once")
        assert (await client.until("error"))["data"]["code"] == "expired"

    drive(scenario())
    assert app_py.read_text() == BEFORE


def test_a_websocket_client_approves_the_call_a_rest_run_left_waiting(serve, app_py):
    server = serve([PATCH, {"text": "Patched."}])
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        first = http.post(f"/v1/sessions/{sid}/messages", json={"text": "say hello"}).json()
    [waiting] = first["approvals"]
    assert app_py.read_text() == BEFORE

    async def scenario():
        client, ready = await open_client(server.ws_url(sessionId=sid))
        assert ready["data"]["pendingApprovals"] == []  # it waits in the history, not live
        await client.send(
            "approval_response", sid, requestId=waiting["requestId"], choice="allow_once"
        )
        started = (await client.until("run_started"))["data"]
        assert started["message"] == ""
        decided = (await client.until("permission_decision"))["data"]
        assert (decided["call_id"], decided["decided_by"]) == (waiting["callId"], "user")
        assert (await client.until("run_finished"))["data"]["text"] == "Patched."
        await client.send(
            "approval_response", sid, requestId=waiting["requestId"], choice="allow_once"
        )
        assert (await client.until("error"))["data"]["code"] == "unknown_request"

    drive(scenario())
    assert app_py.read_text() == AFTER
