"""A session store that cannot grow (a full disk): refused loudly, stopped, nothing half-written."""

import asyncio
import json
import sqlite3

import httpx
from websockets.asyncio.client import connect

from neta.hosting.config import HostConfig
from neta.providers.scripted import ScriptedProvider
from neta.server import create_app
from tests import http_clients
from tests.core.hosting.server_harness import builtin_pm, drive, open_client

BIG = "x" * 6000


def fill_disk(hub):
    """Make the session database unable to grow, and use up the room left inside it."""
    with hub.store._lock:
        db = hub.store._db
        db.execute("CREATE TABLE IF NOT EXISTS filler (x BLOB)")
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count = {pages}")
        for size in (4096, 512, 64, 8, 1):
            while True:
                try:
                    db.execute("INSERT INTO filler VALUES (?)", (b"\0" * size,))
                except sqlite3.OperationalError:
                    break


class FillingDiskWhileThinking(ScriptedProvider):
    """A model during whose first answer the disk fills up."""

    hub = None

    async def complete(self, request, on_text):
        if self.remaining == len(self.script.turns):
            fill_disk(self.hub)
        return await super().complete(request, on_text)


def serve_filling_disk(serve, turns):
    """A server whose model replays ``turns``, the disk filling up during its first answer."""
    model = FillingDiskWhileThinking(turns)
    server = serve([], provider_factory=lambda: model)
    model.hub = server.hub
    return server, model


def saved_history(tmp_path, session_id):
    with sqlite3.connect(tmp_path / "home" / "neta.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = db.execute(
            "SELECT body FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
        ).fetchall()
    return rows


def test_new_sessions_on_a_full_disk_are_refused_with_storage_unavailable(serve):
    server = serve([])
    fill_disk(server.hub)
    with http_clients.client(base_url=server.http, timeout=30) as http:
        for _ in range(100):  # a few may still fit in the room left inside the file's pages
            created = http.post("/v1/sessions")
            if created.status_code != 201:
                break
    assert created.status_code == 503
    assert created.json()["code"] == "storage_unavailable"

    async def scenario():
        async with connect(server.ws_url()) as ws:
            first = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert first["type"] == "error"
            assert first["data"]["code"] == "storage_unavailable"
            await asyncio.wait_for(ws.wait_closed(), 10)

    drive(scenario())
    # a refused session leaves nothing behind in memory
    assert all(server.hub.store.exists(sid) for sid in server.hub._live)


def test_a_rest_message_that_cannot_be_saved_is_503_runs_nothing_and_keeps_what_was_saved(
    serve, tmp_path
):
    model = ScriptedProvider([{"text": "first answer"}, {"text": "never said"}])
    server = serve([], provider_factory=lambda: model)
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        assert (
            http.post(f"/v1/sessions/{sid}/messages", json={"text": "remember me"}).json()["reply"]
            == "first answer"
        )
        fill_disk(server.hub)
        refused = http.post(f"/v1/sessions/{sid}/messages", json={"text": BIG})
        assert refused.status_code == 503, refused.text
        assert refused.json()["code"] == "storage_unavailable"
        assert model.remaining == 1  # the model was not asked: nothing runs unsaved
        view = http.get(f"/v1/sessions/{sid}").json()
        assert [m["content"] for m in view["messages"]] == ["remember me", "first answer"]
    assert len(saved_history(tmp_path, sid)) == 2
    server.stop()

    again = serve([{"text": "back"}])
    with http_clients.client(base_url=again.http, timeout=30) as http:
        messages = http.get(f"/v1/sessions/{sid}").json()["messages"]
    assert [m["content"] for m in messages] == ["remember me", "first answer"]


def test_a_tool_call_that_cannot_be_saved_stops_the_run_before_the_tool_runs(serve, tmp_path):
    write = {
        "tool_calls": [{"name": "write_file", "arguments": {"path": "out.txt", "content": BIG}}]
    }
    server, model = serve_filling_disk(serve, [write, {"text": "wrote it"}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="write it")
        error = await client.until("error")
        assert error["data"]["code"] == "storage_unavailable"
        finished = await client.until("run_finished")
        assert finished["data"]["outcome"] == "error"
        assert "store cannot write" in finished["data"]["reason"]
        return sid

    sid = drive(scenario())
    assert not (tmp_path / "ws" / "out.txt").exists()
    assert model.remaining == 1
    assert len(saved_history(tmp_path, sid)) == 1  # the user's message; no half turn
    view = asyncio.run(server.hub.view(sid))
    assert len(view.history) == len(saved_history(tmp_path, sid))  # memory says what disk has


def test_a_question_that_cannot_be_saved_stops_the_run_instead_of_telling_the_model(
    serve, tmp_path
):
    ask = {"tool_calls": [{"name": "clarify", "arguments": {"question": BIG}}]}
    model = ScriptedProvider([ask, {"text": "asked nobody"}])
    server = serve([], provider_factory=lambda: model)

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        fill_disk(server.hub)
        await client.send("user_message", sid, text="ask me")
        finished = await client.until("run_finished")
        assert finished["data"]["outcome"] == "error"
        kinds = [f["type"] for f in client.seen]
        assert "clarify_request" not in kinds
        assert {"type": "error", "code": "storage_unavailable"} in [
            {"type": f["type"], "code": f["data"].get("code")} for f in client.seen
        ]

    drive(scenario())
    assert model.remaining == 1
    assert len(server.hub.questions) == 0


def test_the_app_answers_a_failing_store_on_create_with_503_not_500(tmp_path):
    app = create_app(
        HostConfig(
            provider_factory=lambda: ScriptedProvider([]),
            home=tmp_path / "home",
            workspace=tmp_path,
            plugin_manager=builtin_pm(),
        )
    )
    hub = app.state.hub
    hub.store.close()  # nothing can be written any more

    async def scenario():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return await http.post("/v1/sessions")

    answer = asyncio.run(scenario())
    assert answer.status_code == 503
    assert answer.json()["code"] == "storage_unavailable"
    assert hub._live == {}


def test_a_reply_that_cannot_be_saved_ends_the_run_as_an_error_after_telling_why(serve, tmp_path):
    server, model = serve_filling_disk(serve, [{"text": BIG}])

    async def scenario():
        client, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        await client.send("user_message", sid, text="say a lot")
        finished = await client.until("run_finished")
        ended = [(f["type"], f["data"].get("code")) for f in client.seen][-2:]
        assert ended == [("error", "storage_unavailable"), ("run_finished", None)]
        assert finished["data"]["outcome"] == "error"
        assert "store cannot write" in finished["data"]["reason"]
        return sid

    sid = drive(scenario())
    assert model.remaining == 0  # the reply was made, and could not be saved
    assert len(saved_history(tmp_path, sid)) == 1  # the user's message; not the reply
    assert len(asyncio.run(server.hub.view(sid)).history) == 1
