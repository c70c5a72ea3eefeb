"""``neta serve`` told to stop (SIGTERM) with runs in flight: it drains before it exits.

It stops accepting connections, lets its runs go on for ``--drain-timeout`` seconds, then
interrupts the rest: each run's end is saved with a note, each WebSocket client gets a last
``run_finished {outcome: "interrupted"}`` before its connection closes (1012, service restart),
and a REST caller whose run was cut gets a 503 with a JSON body, never a traceback.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed

from neta.errors import HostError
from tests import http_clients
from tests.core.hosting.server_harness import ASK, Client, drive, open_client
from tests.services import SERVE_TOKEN, bearer, start_neta_serve

SLOW = {"text": "too late", "delay": 60}


def noted_interrupted(messages: list[tuple[str, str | None]]) -> bool:
    """Whether a history ends with the note of a run the server's stop interrupted."""
    role, content = messages[-1]
    return role == "assistant" and (content or "").startswith("[interrupted] The server")


def ws_url(base: str, **query: str) -> str:
    params = "&".join(f"{k}={v}" for k, v in {**query, "token": SERVE_TOKEN}.items())
    return base.replace("http://", "ws://", 1) + f"/ws?{params}"


async def stopped_listening(base: str) -> None:
    """Wait until the server at ``base`` refuses new connections (its drain has begun)."""
    port = int(base.rsplit(":", 1)[1])
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                pass
        except OSError:
            return
        await asyncio.sleep(0.05)


async def close_code(client: Client) -> int | None:
    """Read until the server closes the connection; the code it closed with."""
    with pytest.raises(ConnectionClosed) as closed:
        await read_to_the_end(client)
    return closed.value.rcvd.code if closed.value.rcvd is not None else None


async def read_to_the_end(client: Client) -> None:
    while True:
        await client.next(timeout=60)


def ended(proc: subprocess.Popen[bytes], log: Path) -> str:
    """Wait for the stopping server to exit; what it printed."""
    proc.wait(60)
    return log.read_text(errors="replace")


def saved_messages(root: Path, sid: str) -> list[tuple[str, str | None]]:
    """The session's history as a new server on the same home reads it."""
    proc, base = start_neta_serve(root, [])
    try:
        with http_clients.client(base_url=base, headers=bearer(), timeout=30) as http:
            messages = http.get(f"/v1/sessions/{sid}").json()["messages"]
    finally:
        proc.terminate()
        proc.wait(30)
    return [(m["role"], m.get("content")) for m in messages]


def test_a_run_outlasting_the_drain_ends_interrupted_for_its_client_and_is_saved(tmp_path):
    proc, base = start_neta_serve(tmp_path, [SLOW], "--drain-timeout", "0.5")

    async def scenario() -> tuple[str, dict, int | None]:
        client, ready = await open_client(ws_url(base))
        sid = ready["sessionId"]
        await client.send("user_message", sid, text="think hard")
        await client.until("run_started")
        proc.send_signal(signal.SIGTERM)
        finished = await client.until("run_finished", timeout=60)
        return sid, finished["data"], await close_code(client)

    sid, finished, code = drive(scenario(), timeout=90)
    assert finished["outcome"] == "interrupted"
    assert "server stopped" in finished["reason"]
    assert code == 1012  # service restart: the client may come back (to another server)
    assert "Traceback" not in ended(proc, tmp_path / "serve.log")
    saved = saved_messages(tmp_path, sid)
    assert saved[0] == ("user", "think hard")
    assert len(saved) == 2
    assert noted_interrupted(saved)


def test_a_question_waiting_at_sigterm_can_be_answered_while_the_server_drains(tmp_path):
    proc, base = start_neta_serve(tmp_path, [ASK, {"text": "Blue it is."}], "--drain-timeout", "60")

    async def scenario() -> tuple[str, list[dict], int | None]:
        client, ready = await open_client(ws_url(base))
        sid = ready["sessionId"]
        await client.send("user_message", sid, text="paint it")
        asked = await client.until("clarify_request")
        proc.send_signal(signal.SIGTERM)
        await stopped_listening(base)  # the drain began: no new connection is accepted
        await client.send(
            "clarify_response", sid, requestId=asked["data"]["requestId"], answer="blue"
        )
        finished = await client.until("run_finished", timeout=60)
        return sid, [finished["data"]], await close_code(client)

    sid, (finished,), code = drive(scenario(), timeout=90)
    assert (finished["outcome"], finished["text"]) == ("completed", "Blue it is.")
    assert code == 1012
    assert "Traceback" not in ended(proc, tmp_path / "serve.log")
    assert saved_messages(tmp_path, sid)[-1] == ("assistant", "Blue it is.")


def test_a_rest_message_cut_by_the_drain_is_answered_503_with_a_json_refusal(tmp_path):
    proc, base = start_neta_serve(tmp_path, [SLOW], "--drain-timeout", "0.5")

    async def scenario() -> tuple[str, int, dict]:
        async with http_clients.async_client(base_url=base, headers=bearer(), timeout=90) as http:
            sid = (await http.post("/v1/sessions")).json()["sessionId"]
            message = asyncio.create_task(
                http.post(f"/v1/sessions/{sid}/messages", json={"text": "think hard"})
            )
            while not (await http.get(f"/v1/sessions/{sid}")).json()["running"]:
                await asyncio.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            reply = await message
        return sid, reply.status_code, reply.json()

    sid, status, body = drive(scenario(), timeout=90)
    assert status == 503
    assert body["code"] == "server_stopping"
    assert "send the message again" in body["detail"]
    assert "Traceback" not in ended(proc, tmp_path / "serve.log")
    saved = saved_messages(tmp_path, sid)
    assert saved[0] == ("user", "think hard")
    assert len(saved) == 2
    assert noted_interrupted(saved)


def test_a_draining_server_lets_idle_clients_go_at_once_and_starts_no_run(serve):
    server = serve([ASK, {"text": "Blue it is."}], drain_seconds=60)

    async def scenario() -> tuple[int | None, str | None, dict, int | None]:
        asking, ready = await open_client(server.ws_url())
        sid = ready["data"]["sessionId"]
        idle, ready = await open_client(server.ws_url())
        idle_session = server.hub._live[ready["data"]["sessionId"]]
        await asking.send("user_message", sid, text="paint it")
        asked = await asking.until("clarify_request")
        server.server.should_exit = True  # what SIGTERM does
        idle_closed = await close_code(idle)  # nothing of its own to wait for
        refused = None
        try:
            server.hub.start_run(idle_session, "and now?", claimed=True)
        except HostError as exc:
            refused = exc.code
        await asking.send(
            "clarify_response", sid, requestId=asked["data"]["requestId"], answer="blue"
        )
        finished = await asking.until("run_finished")
        return idle_closed, refused, finished["data"], await close_code(asking)

    idle_closed, refused, finished, asking_closed = drive(scenario(), timeout=60)
    assert idle_closed == asking_closed == 1012
    assert refused == "server_stopping"
    assert (finished["outcome"], finished["text"]) == ("completed", "Blue it is.")
    server.thread.join(30)
    assert not server.thread.is_alive()
