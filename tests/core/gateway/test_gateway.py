"""The WebSocket gateway, over a real uvicorn server and the websockets client."""

import asyncio
import contextlib
import json
import threading

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK, InvalidStatus

from tests import http_clients
from tests.core.gateway import path_plugin
from tests.core.hosting.server_harness import (
    ASK,
    ExplodingOnce,
    builtin_pm,
    drive,
    open_client,
    wait_until,
)

TIMED_OUT = "The user did not answer in time. Decide for yourself from what you know and continue."


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


def test_answer_from_another_sessions_connection_is_refused_as_unknown_and_stays_pending(serve):
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
        # as for an id nobody asked: whether another session's question exists is not told
        assert error["data"] == {
            "code": "unknown_request",
            "message": f"no question has id {request_id!r}",
        }
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
        assert result["data"]["content"] == TIMED_OUT  # not "User answered: The user did not..."
        assert result["data"]["data"]["timed_out"] is True
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
        live = server.hub._live[sid]
        await wait_until(lambda: not live.outboxes)  # the server has seen the client go

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


def test_two_connections_of_one_session_answering_at_once_only_the_first_wins(serve):
    server = serve([ASK, {"text": "ok"}])

    async def scenario():
        first, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        second, _ = await open_client(server.ws_url(sessionId=sid))
        await first.send("user_message", sid, text="go")
        rid = (await first.until("clarify_request"))["data"]["requestId"]
        await second.until("clarify_request")
        await asyncio.gather(
            first.send("clarify_response", sid, requestId=rid, answer="red"),
            second.send("clarify_response", sid, requestId=rid, answer="blue"),
        )
        for client in (first, second):
            await client.until("run_finished")
            await client.send("ping", sid)
            await client.until("pong")
        seen = [*first.seen, *second.seen]
        outcomes = [f["data"]["outcome"] for f in seen if f["type"] == "clarify_resolved"]
        assert outcomes == ["answered", "answered"]  # one resolution, seen by both
        assert [f["data"]["code"] for f in seen if f["type"] == "error"] == ["already_resolved"]

    drive(scenario())


def test_deleting_a_session_tells_and_closes_its_connections(serve):
    server = serve([ASK, {"text": "never"}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="go")
        await client.until("clarify_request")
        async with http_clients.async_client(base_url=server.http) as http:
            assert (await http.delete(f"/v1/sessions/{sid}")).status_code == 204
        assert (await client.until("clarify_resolved"))["data"]["outcome"] == "cancelled"
        assert (await client.until("error"))["data"]["code"] == "session_deleted"
        with pytest.raises(ConnectionClosedOK):
            await client.next(timeout=5)
        assert client.ws.close_code == 1000
        await wait_until(lambda: server.hub._live == {})
        async with connect(server.ws_url(sessionId=sid)) as again:
            assert json.loads(await again.recv())["data"]["code"] == "unknown_session"

    drive(scenario())


def test_a_run_that_fails_with_a_bug_ends_with_run_finished_error_and_the_session_goes_on(
    serve,
):
    server = serve([], provider_factory=lambda: ExplodingOnce([{"text": "recovered"}]))

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="go")
        finished = await client.until("run_finished", timeout=5)
        assert finished["data"]["outcome"] == "error"
        assert "boom" in finished["data"]["reason"]
        await client.send("user_message", sid, text="again")
        finished = await client.until("run_finished", timeout=5)
        assert finished["data"]["outcome"] == "completed"
        assert finished["data"]["text"] == "recovered"

    drive(scenario())


def test_deeply_nested_binary_and_non_unicode_frames_get_errors_and_the_connection_lives(serve):
    server = serve([{"text": "fine", "expect": {"last_message_contains": "still here"}}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send_raw('{"type": "ping", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
        assert (await client.next())["data"]["code"] == "invalid_json"
        await client.ws.send(b'{"type": "ping", "note": "\xff"}')
        assert (await client.next())["data"]["code"] == "invalid_json"
        await client.ws.send(json.dumps({"type": "ping", "sessionId": sid}).encode())
        assert (await client.next())["type"] == "pong"
        await client.send_raw('{"type": "user_message", "data": {"text": "\\ud800"}}')
        error = await client.next()
        assert error["data"]["code"] == "invalid_frame", error
        await client.send("user_message", sid, text="still here")
        assert (await client.until("run_finished"))["data"]["text"] == "fine"
        history = server.hub.store.load(sid).history
        assert [m.content for m in history] == ["still here", "fine"]

    drive(scenario())


def test_frame_beyond_the_servers_hard_limit_closes_only_that_connection(serve):
    server = serve([{"text": "fine"}], max_frame_bytes=64 * 1024)

    async def scenario():
        client, ready = await open_client(server.ws_url(), max_size=None)
        sid = ready["data"]["sessionId"]
        with contextlib.suppress(ConnectionClosed):  # the close may beat the last bytes
            await client.send("user_message", sid, text="x" * (2 << 20))
        with pytest.raises(ConnectionClosed):
            await client.next()
        assert client.ws.close_code == 1009
        again, ready = await open_client(server.ws_url(sessionId=sid))
        await again.send("user_message", sid, text="hello")
        assert (await again.until("run_finished"))["data"]["text"] == "fine"

    drive(scenario())


def test_event_data_that_is_not_plain_json_still_reaches_the_client(serve, tmp_path):
    server = serve(
        [{"tool_calls": [{"name": "where", "arguments": {}}]}, {"text": "done"}],
        plugin_manager=builtin_pm(("paths", path_plugin)),
        permissions="auto",  # the tool declares no effect: by default it would ask first
    )

    async def scenario():
        client, ready = await open_client(server.ws_url())
        await client.send("user_message", ready["data"]["sessionId"], text="where?")
        result = await client.until("tool_result", timeout=5)
        assert result["data"]["data"] == {"root": str(tmp_path / "ws")}
        assert (await client.until("run_finished", timeout=5))["data"]["text"] == "done"

    drive(scenario())


def test_a_web_page_from_another_origin_is_refused_unless_it_has_the_token(serve):
    open_server = serve([{"text": "hi"}])
    guarded = serve([{"text": "hi"}], token="s3cret")

    async def scenario():
        with pytest.raises(InvalidStatus):
            await connect(open_server.ws_url(), origin="http://evil.example")
        with pytest.raises(InvalidStatus):
            await connect(open_server.ws_url(), origin="null")
        assert open_server.hub._live == {}
        for origin in (f"http://127.0.0.1:{open_server.port}", "http://localhost:3000"):
            client, _ = await open_client(open_server.ws_url(), origin=origin)
            await client.ws.close()
        with pytest.raises(InvalidStatus):
            await connect(guarded.ws_url(), origin="http://evil.example")
        client, _ = await open_client(guarded.ws_url(token="s3cret"), origin="http://app.example")
        await client.ws.close()

    drive(scenario())


def slow_final_save(hub, seconds=0.3):
    """Make the save at the end of each run of ``hub`` take ``seconds`` longer, as a remote
    store's may; the returned event is set when such a save starts."""
    saving = threading.Event()
    save_async = hub.saver.save_async

    async def slow(live, *, stop=True, **run_mark):
        if not stop:  # the save at a run's end
            saving.set()
            await asyncio.sleep(seconds)
        await save_async(live, stop=stop, **run_mark)

    hub.saver.save_async = slow
    return saving


def test_run_finished_is_sent_once_the_run_is_saved_and_a_cancel_after_it_finds_no_run(serve):
    # a remote store saves a run's end asynchronously; clients told of the end before that
    # save could read a history without the reply, and a cancel_run sent at once cancelled
    # the finished run (no not_running error) while it was being saved
    server = serve([{"text": "done"}] * 2)
    slow_final_save(server.hub)

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["sessionId"]
        await client.send("user_message", sid, text="hi")
        finished = await client.until("run_finished")
        saved = [m.content for m in server.hub.store.load(sid).history]
        assert finished["data"]["outcome"] == "completed"
        assert saved == ["hi", "done"]
        await client.send("cancel_run", sid)
        refused = await client.next()
        assert (refused["type"], refused["data"]["code"]) == ("error", "not_running")
        await client.send("user_message", sid, text="again")
        assert (await client.until("run_finished"))["data"]["text"] == "done"
        assert [f["data"]["code"] for f in client.seen if f["type"] == "error"] == ["not_running"]

    drive(scenario())


def test_a_cancel_while_the_run_saves_its_end_finds_no_run_and_the_reply_stands(serve):
    server = serve([{"text": "done"}])
    saving = slow_final_save(server.hub)

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["sessionId"]
        async with http_clients.async_client(base_url=server.http, timeout=30) as http:
            sent = asyncio.create_task(
                http.post(f"/v1/sessions/{sid}/messages", json={"text": "hi"})
            )
            await wait_until(saving.is_set)
            await client.send("cancel_run", sid)
            finished = await client.until("run_finished")
            reply = (await sent).json()
        assert [f["data"]["code"] for f in client.seen if f["type"] == "error"] == ["not_running"]
        assert finished["data"]["outcome"] == "completed"
        assert (reply["outcome"], reply["reply"]) == ("completed", "done")
        assert [m.content for m in server.hub.store.load(sid).history] == ["hi", "done"]

    drive(scenario())
