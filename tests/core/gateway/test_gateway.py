"""The WebSocket gateway, over a real uvicorn server and the websockets client."""

import asyncio
import json

import pytest
from websockets.exceptions import InvalidStatus

from tests.core.gateway.conftest import ASK
from tests.core.gateway.server_harness import drive, open_client


def test_clarify_round_trip_resumes_the_run_with_the_answer(serve):
    server = serve([ASK, {"text": "Blue it is.", "expect": {"last_message_contains": "blue"}}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        session_id = ready["data"]["sessionId"]
        assert ready["sessionId"] == session_id
        assert ready["data"]["pendingClarify"] == []
        await client.send("user_message", session_id, text="paint the fence")
        request = await client.until("clarify_request")
        assert request["data"]["question"] == "Which colour?"
        assert request["data"]["choices"] == ["red", "blue"]
        assert len(request["data"]["requestId"]) >= 20
        await client.send(
            "clarify_response", session_id, requestId=request["data"]["requestId"], answer="blue"
        )
        resolved = await client.until("clarify_resolved")
        assert resolved["data"] == {
            "requestId": request["data"]["requestId"],
            "outcome": "answered",
        }
        finished = await client.until("run_finished")
        assert finished["data"]["outcome"] == "completed"
        assert finished["data"]["text"] == "Blue it is."
        types = [f["type"] for f in client.seen]
        assert (
            types.index("run_started")
            < types.index("tool_call_start")
            < types.index("clarify_request")
        )
        await client.ws.close()

    drive(scenario())


def test_answer_from_another_sessions_connection_is_refused_and_stays_pending(serve):
    server = serve([ASK, {"text": "ok", "expect": {"last_message_contains": "red"}}])

    async def scenario():
        asker, ready = await open_client(server.ws_url())
        session_id = ready["data"]["sessionId"]
        await asker.send("user_message", session_id, text="go")
        request_id = (await asker.until("clarify_request"))["data"]["requestId"]

        intruder, other = await open_client(server.ws_url())
        other_id = other["data"]["sessionId"]
        await intruder.send("clarify_response", other_id, requestId=request_id, answer="blue")
        error = await intruder.until("error")
        assert error["data"]["code"] == "forbidden"
        # claiming to be the other session on this connection does not help either
        await intruder.send("clarify_response", session_id, requestId=request_id, answer="blue")
        assert (await intruder.until("error"))["data"]["code"] == "forbidden"

        assert [q.request_id for q in server.hub.questions.pending_for(session_id)] == [request_id]
        await asker.send("clarify_response", session_id, requestId=request_id, answer="red")
        assert (await asker.until("run_finished"))["data"]["outcome"] == "completed"

    drive(scenario())


def test_duplicate_answer_gets_already_resolved_and_unknown_id_unknown_request(serve):
    server = serve([ASK, {"text": "ok"}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="go")
        rid = (await client.until("clarify_request"))["data"]["requestId"]
        await client.send("clarify_response", sid, requestId=rid, answer="red")
        await client.until("clarify_resolved")
        await client.send("clarify_response", sid, requestId=rid, answer="blue")
        assert (await client.until("error"))["data"]["code"] == "already_resolved"
        await client.send("clarify_response", sid, requestId="no-such-id", answer="blue")
        assert (await client.until("error"))["data"]["code"] == "unknown_request"

    drive(scenario())


def test_unanswered_question_times_out_and_a_late_answer_is_expired(serve):
    server = serve(
        [
            ASK,
            {
                "text": "Decided myself.",
                "expect": {"last_message_contains": "did not answer in time"},
            },
        ],
        clarify_timeout=0.5,
    )

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="go")
        rid = (await client.until("clarify_request"))["data"]["requestId"]
        resolved = await client.until("clarify_resolved")
        assert resolved["data"] == {"requestId": rid, "outcome": "timed_out"}
        result = await client.until("tool_result")
        assert "Decide for yourself from what you know and continue." in result["data"]["content"]
        assert (await client.until("run_finished"))["data"]["text"] == "Decided myself."
        await client.send("clarify_response", sid, requestId=rid, answer="red")
        assert (await client.until("error"))["data"]["code"] == "expired"

    drive(scenario())


def test_disconnect_keeps_the_question_and_reconnect_resends_it(serve):
    server = serve([ASK, {"text": "Red, then.", "expect": {"last_message_contains": "red"}}])

    async def scenario():
        first, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await first.send("user_message", sid, text="go")
        request = (await first.until("clarify_request"))["data"]
        await first.ws.close()
        await asyncio.sleep(0.2)

        second, again = await open_client(server.ws_url(sessionId=sid))
        assert again["data"]["sessionId"] == sid
        assert again["data"]["pendingClarify"] == [request]
        await second.send("clarify_response", sid, requestId=request["requestId"], answer="red")
        assert (await second.until("run_finished"))["data"]["text"] == "Red, then."

    drive(scenario())


def test_malformed_unknown_and_oversize_frames_get_errors_and_the_connection_lives(serve):
    server = serve([{"text": "fine"}], max_frame_bytes=64 * 1024)

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send_raw("{not json")
        assert (await client.next())["data"]["code"] == "invalid_json"
        await client.send_raw(json.dumps({"type": "launch_rockets", "sessionId": sid}))
        assert (await client.next())["data"]["code"] == "unknown_type"
        await client.send_raw(json.dumps({"type": "user_message", "sessionId": sid, "data": {}}))
        assert (await client.next())["data"]["code"] == "invalid_frame"
        await client.send_raw("[1, 2]")
        assert (await client.next())["data"]["code"] == "invalid_frame"
        await client.send("user_message", sid, text="x" * (100 * 1024))
        error = await client.next()
        assert error["data"]["code"] == "frame_too_large"
        await client.send("ping", sid)
        assert (await client.next())["type"] == "pong"
        await client.send("user_message", sid, text="still there?")
        assert (await client.until("run_finished"))["data"]["text"] == "fine"

    drive(scenario())


def test_second_message_while_running_is_busy(serve):
    server = serve([{"text": "slow", "delay": 1.0}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="one")
        await client.until("run_started")
        await client.send("user_message", sid, text="two")
        assert (await client.until("error"))["data"]["code"] == "busy"
        assert (await client.until("run_finished"))["data"]["text"] == "slow"

    drive(scenario())


def test_cancel_run_cancels_a_waiting_question(serve):
    server = serve([ASK, {"text": "never"}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="go")
        rid = (await client.until("clarify_request"))["data"]["requestId"]
        await client.send("cancel_run", sid)
        resolved = await client.until("clarify_resolved")
        assert resolved["data"] == {"requestId": rid, "outcome": "cancelled"}
        assert (await client.until("run_finished"))["data"]["outcome"] == "cancelled"
        assert len(server.hub.questions) == 0

    drive(scenario())


def test_unknown_session_id_is_refused(serve):
    server = serve([{"text": "x"}])

    async def scenario():
        from websockets.asyncio.client import connect

        async with connect(server.ws_url(sessionId="made-up")) as ws:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 5))
        assert frame["type"] == "error"
        assert frame["data"]["code"] == "unknown_session"

    drive(scenario())
    assert server.hub._live == {}


def test_token_is_required_before_any_session_state(serve):
    server = serve([{"text": "hello"}], token="s3cret")

    async def scenario():
        from websockets.asyncio.client import connect

        for url in (server.ws_url(), server.ws_url(token="wrong")):
            with pytest.raises(InvalidStatus):
                await connect(url)
        assert server.hub._live == {}
        client, ready = await open_client(server.ws_url(token="s3cret"))
        await client.send("user_message", ready["data"]["sessionId"], text="hi")
        assert (await client.until("run_finished"))["data"]["text"] == "hello"
        bearer, _ = await open_client(
            server.ws_url(), additional_headers={"Authorization": "Bearer s3cret"}
        )
        await bearer.ws.close()

    drive(scenario())
