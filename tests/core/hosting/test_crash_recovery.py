"""A server killed mid-run (``kill -9``) and started again: its sessions are taken over at once.

The lease of a process that is gone is no longer waited out when the process was on this
machine: the restarted server frees it, notes what was lost in the history (a question left
waiting, a run cut short) and tells the first client that comes back. A session another live
server holds is refused as a passing state (close 1013, try again later), never as final.
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

from websockets.asyncio.client import connect

from tests import http_clients
from tests.core.hosting.server_harness import ASK, drive, open_client
from tests.services import SERVE_TOKEN, bearer, start_neta_serve

LEASE = "60"
"""Far longer than any test waits: a takeover must not wait for the dead server's lease."""


def ws_url(base: str, **query: str) -> str:
    params = "&".join(f"{k}={v}" for k, v in {**query, "token": SERVE_TOKEN}.items())
    return base.replace("http://", "ws://", 1) + f"/ws?{params}"


def killed_mid_run(root: Path, turns: list[object], until: str) -> str:
    """Start a server, start a run in a new session, kill the server once ``until`` came."""
    proc, base = start_neta_serve(root, turns, "--lease-seconds", LEASE)
    try:

        async def scenario() -> str:
            client, ready = await open_client(ws_url(base))
            sid = str(ready["sessionId"])
            await client.send("user_message", sid, text="paint it")
            await client.until(until)
            return sid

        return drive(scenario(), timeout=60)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def is_interrupted_note(message: dict[str, object]) -> bool:
    content = message.get("content")
    return message["role"] == "assistant" and str(content).startswith("[interrupted] The server")


def test_a_killed_servers_question_and_run_are_reported_to_the_client_of_the_next_one(tmp_path):
    sid = killed_mid_run(tmp_path, [ASK], until="clarify_request")
    proc, base = start_neta_serve(
        tmp_path, [{"text": "Red.", "expect": {"last_message_contains": "red"}}]
    )
    try:

        async def reconnect() -> list[dict]:
            client, ready = await open_client(ws_url(base, sessionId=sid))
            assert ready["data"]["pendingClarify"] == []
            told = [await client.next(), await client.next()]
            await client.send("user_message", sid, text="red")
            finished = await client.until("run_finished")
            assert finished["data"]["outcome"] == "completed", finished["data"]["reason"]
            return told

        told = drive(reconnect(), timeout=60)
        assert [(f["type"], f["data"]["outcome"]) for f in told] == [
            ("clarify_resolved", "server_restarted"),
            ("run_finished", "interrupted"),
        ]
        with http_clients.client(base_url=base, headers=bearer(), timeout=30) as http:
            messages = http.get(f"/v1/sessions/{sid}").json()["messages"]
    finally:
        proc.terminate()
        proc.wait(30)
    assert [m["role"] for m in messages] == [
        "user", "assistant", "tool", "assistant", "user", "assistant",
    ]  # fmt: skip
    assert "server restarted" in messages[2]["content"]
    assert is_interrupted_note(messages[3])


def test_a_killed_servers_run_is_noted_at_the_next_start_and_told_once(tmp_path):
    sid = killed_mid_run(tmp_path, [{"text": "too late", "delay": 60}], until="run_started")
    proc, base = start_neta_serve(tmp_path, [{"text": "again"}])
    try:
        with http_clients.client(base_url=base, headers=bearer(), timeout=30) as http:
            messages = http.get(f"/v1/sessions/{sid}").json()["messages"]
        assert messages[0] == {"role": "user", "content": "paint it"}
        assert len(messages) == 2
        assert is_interrupted_note(messages[1])

        async def reconnect() -> list[str]:
            first, _ = await open_client(ws_url(base, sessionId=sid))
            finished = await first.next()
            assert (finished["type"], finished["data"]["outcome"]) == (
                "run_finished",
                "interrupted",
            )
            assert "stopped" in finished["data"]["reason"]
            await first.ws.close()
            second, _ = await open_client(ws_url(base, sessionId=sid))  # already told
            await second.send("ping", sid)
            return [(await second.next())["type"]]

        assert drive(reconnect(), timeout=60) == ["pong"]
    finally:
        proc.terminate()
        proc.wait(30)


def test_a_session_a_live_server_holds_is_refused_as_try_again_later(serve):
    first = serve([ASK])
    second = serve([])

    async def scenario() -> tuple[str, int | None]:
        _holder, ready = await open_client(first.ws_url())
        sid = ready["data"]["sessionId"]
        async with connect(second.ws_url(sessionId=sid)) as ws:
            refused = json.loads(await asyncio.wait_for(ws.recv(), 10))
            await asyncio.wait_for(ws.wait_closed(), 10)
        return refused["data"]["code"], ws.close_code

    assert drive(scenario()) == ("session_owned", 1013)
