"""Sessions nobody used leave no row behind, and idle ones go after a TTL.

A WebSocket connection without ``?sessionId=`` opens a session; if nothing is ever said in it,
it is deleted when its last client leaves (1,000 idle connections had made 1,000 permanent
rows). ``session_ttl`` deletes sessions nobody used for that long.
"""

import asyncio
import sqlite3
import time

from tests import http_clients
from tests.core.hosting.server_harness import drive, open_client, wait_until


def stored_sessions(home):
    with sqlite3.connect(home / "neta.db") as db:
        return [row[0] for row in db.execute("SELECT id FROM sessions ORDER BY created")]


def test_connections_that_send_nothing_leave_no_session_row(serve, tmp_path):
    # more than the sessions kept idle in memory: those dropped from it go too
    server = serve([{"text": "hi"}], unused_session_seconds=0.2, max_idle_sessions=5)

    async def scenario():
        for _ in range(20):
            client, ready = await open_client(server.ws_url())
            assert ready["type"] == "session_ready"
            await client.ws.close()
        await wait_until(lambda: not stored_sessions(tmp_path / "home"))

    drive(scenario())
    assert stored_sessions(tmp_path / "home") == []
    assert server.hub._live == {}  # nor anything in memory once they left


def test_a_client_whose_connection_dropped_comes_back_to_its_empty_session(serve, tmp_path):
    server = serve([{"text": "fine"}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["sessionId"]
        await client.ws.close()
        again, ready = await open_client(server.ws_url(sessionId=sid))
        assert ready["sessionId"] == sid
        await again.send("user_message", sid, text="hello")
        return (await again.until("run_finished"))["data"]["text"]

    assert drive(scenario()) == "fine"


def test_the_first_message_stores_the_session_and_a_reconnect_finds_it(serve, tmp_path):
    server = serve([{"text": "hi"}, {"text": "again"}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["sessionId"]
        await client.send("user_message", sid, text="hello")
        finished = await client.until("run_finished")
        assert finished["data"]["text"] == "hi"
        await client.ws.close()
        return sid

    sid = drive(scenario())
    assert stored_sessions(tmp_path / "home") == [sid]

    async def again():
        client, ready = await open_client(server.ws_url(sessionId=sid))
        assert ready["sessionId"] == sid
        await client.send("user_message", sid, text="more")
        return (await client.until("run_finished"))["data"]["text"]

    assert drive(again()) == "again"
    with http_clients.client(base_url=server.http, timeout=30) as http:
        view = http.get(f"/v1/sessions/{sid}").json()
    assert [m["content"] for m in view["messages"]] == ["hello", "hi", "more", "again"]


def test_a_second_connection_to_a_session_not_stored_yet_joins_it(serve, tmp_path):
    server = serve([{"text": "hi"}])

    async def scenario():
        first, ready = await open_client(server.ws_url())
        sid = ready["sessionId"]
        second, joined = await open_client(server.ws_url(sessionId=sid))
        assert joined["sessionId"] == sid
        await second.send("user_message", sid, text="hello")
        assert (await first.until("run_finished"))["data"]["text"] == "hi"
        return sid

    sid = drive(scenario())
    assert stored_sessions(tmp_path / "home") == [sid]


def test_rest_sessions_are_stored_when_made(serve, tmp_path):
    server = serve([{"text": "hi"}])
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
    assert stored_sessions(tmp_path / "home") == [sid]  # another worker may get its message


def test_sessions_idle_past_the_ttl_are_deleted_and_used_ones_kept(serve, tmp_path):
    server = serve([{"text": "hi"}], session_ttl=3600)
    hub = server.hub
    with http_clients.client(base_url=server.http, timeout=30) as http:
        old = http.post("/v1/sessions").json()["sessionId"]
        kept = http.post("/v1/sessions").json()["sessionId"]
        http.post(f"/v1/sessions/{kept}/messages", json={"text": "hello"})
    drive(_settled(hub))
    with sqlite3.connect(tmp_path / "home" / "neta.db") as db:  # as if an hour went by
        db.execute("UPDATE sessions SET updated = ? WHERE id = ?", (time.time() - 7200, old))

    async def with_a_client_on_the_old_one():
        client, _ready = await open_client(server.ws_url(sessionId=old))
        deleted = await hub.delete_idle_sessions()
        await client.ws.close()
        return deleted

    assert drive(with_a_client_on_the_old_one()) == []  # a client holds it: not idle
    drive(_settled(hub))
    with sqlite3.connect(tmp_path / "home" / "neta.db") as db:
        db.execute("UPDATE sessions SET updated = ? WHERE id = ?", (time.time() - 7200, old))
    assert drive(hub.delete_idle_sessions()) == [old]
    assert stored_sessions(tmp_path / "home") == [kept]
    with http_clients.client(base_url=server.http, timeout=30) as http:
        assert http.get(f"/v1/sessions/{old}").status_code == 404
        assert http.get(f"/v1/sessions/{kept}").status_code == 200


async def _settled(hub):
    """Wait until the hub's background releases are done."""
    for _ in range(100):
        if not hub._releasing:
            return
        await asyncio.sleep(0.01)
