"""Two server processes on one NETA_HOME: one owner per session at a time, no turn lost."""

import asyncio
import json
import sqlite3
import time

from websockets.asyncio.client import connect

from neta.hosting.config import HostConfig
from neta.hosting.hub import SessionHub
from neta.providers.scripted import ScriptedProvider
from tests import http_clients
from tests.core.hosting.server_harness import ASK, builtin_pm, drive, open_client


async def refused_attach(server, sid):
    """Connect to ``sid`` on ``server``; the error frame it gets (it must get one)."""
    async with connect(server.ws_url(sessionId=sid)) as ws:
        first = json.loads(await asyncio.wait_for(ws.recv(), 10))
        await asyncio.wait_for(ws.wait_closed(), 10)
    assert first["type"] == "error", first
    return first["data"]


def test_a_session_in_use_on_one_server_is_refused_by_the_other(serve):
    first = serve([ASK, {"text": "Blue.", "expect": {"last_message_contains": "blue"}}])
    second = serve([{"text": "a second owner"}])

    async def scenario():
        client, ready = await open_client(first.ws_url())
        sid = ready["data"]["sessionId"]
        assert (await refused_attach(second, sid))["code"] == "session_owned"
        async with http_clients.async_client(base_url=second.http, timeout=30) as http:
            stolen = await http.post(f"/v1/sessions/{sid}/messages", json={"text": "mine now"})
            assert stolen.status_code == 409
            assert stolen.json()["code"] == "session_owned"
            assert (await http.delete(f"/v1/sessions/{sid}")).status_code == 409
        await client.send("user_message", sid, text="paint it")
        rid = (await client.until("clarify_request"))["data"]["requestId"]
        await client.send("clarify_response", sid, requestId=rid, answer="blue")
        finished = await client.until("run_finished")
        assert finished["data"]["outcome"] == "completed", finished["data"]["reason"]
        return sid

    sid = drive(scenario())
    # once the first server's client has left, the second one may take the session over
    with http_clients.client(base_url=second.http, timeout=30) as http:
        deadline = time.monotonic() + 5
        while (
            reply := http.post(f"/v1/sessions/{sid}/messages", json={"text": "hi"})
        ).status_code == 409:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert reply.json()["reply"] == "a second owner"


def test_a_server_starting_leaves_the_questions_of_a_running_one_alone(serve, tmp_path):
    first = serve([ASK, {"text": "Blue.", "expect": {"last_message_contains": "blue"}}])

    async def scenario():
        client, ready = await open_client(first.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="paint it")
        rid = (await client.until("clarify_request"))["data"]["requestId"]
        serve([])  # a second server starts on the same home while the question waits
        with sqlite3.connect(tmp_path / "home" / "neta.db") as db:
            waiting = db.execute("SELECT request_id FROM pending_clarify").fetchall()
        assert waiting == [(rid,)]
        await client.send("clarify_response", sid, requestId=rid, answer="blue")
        finished = await client.until("run_finished")
        assert finished["data"]["outcome"] == "completed", finished["data"]["reason"]
        return sid

    sid = drive(scenario())
    history = asyncio.run(first.hub.view(sid)).history
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
    assert history[2].content == "User answered: blue"


def test_turns_taken_on_two_servers_in_turn_are_all_kept(serve):
    first_model = ScriptedProvider([{"text": "one"}, {"text": "three"}])
    second_model = ScriptedProvider([{"text": "two"}])
    first = serve([], provider_factory=lambda: first_model)
    second = serve([], provider_factory=lambda: second_model)
    with http_clients.client(timeout=30) as http:
        sid = http.post(f"{first.http}/v1/sessions").json()["sessionId"]
        for server, text in ((first, "1"), (second, "2"), (first, "3")):
            reply = http.post(f"{server.http}/v1/sessions/{sid}/messages", json={"text": text})
            assert reply.status_code == 200, reply.text
        for server in (first, second):
            messages = http.get(f"{server.http}/v1/sessions/{sid}").json()["messages"]
            assert [m["content"] for m in messages] == ["1", "one", "2", "two", "3", "three"]
    # the first server's third turn saw the second server's turn
    assert [m.content for m in first_model.received[1].messages[1:]] == [
        "1",
        "one",
        "2",
        "two",
        "3",
    ]


def test_a_dead_servers_sessions_are_free_once_its_lease_expires_and_a_live_ones_are_not(
    serve, tmp_path
):
    def config(**options):
        return HostConfig(
            provider_factory=lambda: ScriptedProvider([{"text": "taken over"}]),
            home=tmp_path / "home",
            workspace=tmp_path,
            plugin_manager=builtin_pm(),
            lease_seconds=0.5,
            **options,
        )

    async def die_while_connected():
        hub = SessionHub(config())
        live = await hub.create("gateway")
        hub.attach(live, _Nowhere())
        return live.session_id  # the loop ends here: no more heartbeats, nothing released

    orphan = drive(die_while_connected())
    alive = serve([ASK], lease_seconds=0.5)
    taker = serve([{"text": "taken over"}], lease_seconds=0.5)

    async def scenario():
        _holder, ready = await open_client(alive.ws_url())
        held = ready["data"]["sessionId"]
        await asyncio.sleep(1.5)  # three lease periods: only heartbeats keep a lease
        assert (await refused_attach(taker, held))["code"] == "session_owned"
        taken, _ = await open_client(taker.ws_url(sessionId=orphan))
        await taken.send("user_message", orphan, text="anyone?")
        assert (await taken.until("run_finished"))["data"]["text"] == "taken over"

    drive(scenario())


class _Nowhere:
    def put(self, frame):
        pass

    def close(self, code, reason):
        pass
