"""Approvals on a host of several workers sharing Redis (the bus) and PostgreSQL (the store).

Most tests run two ``neta serve`` processes, A and B, as the two workers of one host: each
replays its own script, so a reply tells which worker ran the model, and a client can be sent
to the worker the test wants (behind one port, the kernel chooses). The last one runs
``neta serve --workers 2``, where either worker may get each connection.
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from neta.hosting.clarify_bridge import APPROVAL_RESTART_NOTE
from tests import http_clients
from tests.core.approval_edit import AFTER, BEFORE, PATCH
from tests.core.hosting.server_harness import drive, open_client
from tests.services import (
    SERVE_TOKEN,
    bearer,
    spawn_neta_serve,
    start_neta_serve,
    wait_until_serving,
)

A_TURNS = [PATCH, {"text": "Patched on A."}]
B_TURNS = [{"text": "Patched on B."}]  # B only ever goes on after A's edit
SCENARIO_SECONDS = 60
LEASE_SECONDS = 1.5


class Worker:
    """One ``neta serve`` process of the pair, replaying ``turns`` in the workspace ``root``."""

    def __init__(self, root: Path, name: str, environ: dict[str, str], turns: list[object]):
        self.proc, self.http, self.log = spawn_neta_serve(
            root, turns, "--lease-seconds", str(LEASE_SECONDS), name=name, environ=environ
        )

    def ws(self, **query: str) -> str:
        """The WebSocket URL, with ``query`` and the token."""
        params = "&".join(f"{k}={v}" for k, v in {**query, "token": SERVE_TOKEN}.items())
        return self.http.replace("http://", "ws://", 1) + f"/ws?{params}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def app_py(tmp_path: Path) -> Path:
    path = tmp_path / "app.py"
    path.write_text(BEFORE)
    return path


@pytest.fixture
def pair(tmp_path: Path, redis_url: str, postgres_url: str) -> Iterator[tuple[Worker, Worker]]:
    """Workers A and B of one host, in the workspace ``tmp_path``."""
    environ = {"NETA_REDIS_URL": redis_url, "NETA_DATABASE_URL": postgres_url}
    a = Worker(tmp_path, "a", environ, A_TURNS)
    b = Worker(tmp_path, "b", environ, B_TURNS)  # both start at once
    try:
        for worker in (a, b):
            wait_until_serving(worker.http, worker.proc, worker.log)
        yield a, b
    finally:
        for worker in (a, b):
            worker.stop()
        for worker in (a, b):  # shown if the test fails
            print(f"--- {worker.log.name} ---\n{worker.log.read_text(errors='replace')}")


def without_agent_id(data: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in data.items() if k != "agent_id"}


def test_an_approval_asked_on_one_worker_is_answered_through_the_other(pair, app_py):
    a, b = pair

    async def scenario() -> None:
        on_a, ready = await open_client(a.ws())
        sid = ready["sessionId"]
        on_b, _ = await open_client(b.ws(sessionId=sid))
        await on_a.send("user_message", sid, text="say hello")
        asked_a = await on_a.until("approval_request")
        asked_b = await on_b.until("approval_request")
        assert asked_a["data"] == asked_b["data"]
        request = asked_b["data"]
        assert "+    return 'hello'" in request["preview"]
        # a client arriving at B meanwhile reads the approval, diff and all, as A saved it
        late, again = await open_client(b.ws(sessionId=sid))
        assert again["data"]["pendingApprovals"] == [without_agent_id(request)]
        assert app_py.read_text() == BEFORE

        await on_b.send(
            "approval_response", sid, requestId=request["requestId"], choice="allow_once"
        )
        for client in (on_a, on_b, late):
            resolved = await client.until("approval_resolved")
            assert resolved["data"]["choice"] == "allow_once"
            finished = await client.until("run_finished")
            assert (finished["data"]["outcome"], finished["data"]["text"]) == (
                "completed",
                "Patched on A.",
            )
        assert [f for f in on_b.seen if f["type"] == "error"] == []
        # an answer refused by A, which runs the session, reaches only the one who sent it
        await on_b.send("approval_response", sid, requestId=request["requestId"], choice="deny")
        refused = await on_b.until("error")
        assert refused["data"]["code"] == "already_resolved"
        assert "eventId" not in refused

    drive(scenario(), timeout=SCENARIO_SECONDS)
    assert app_py.read_text() == AFTER


def test_a_rest_approval_left_on_one_worker_is_answered_on_the_other_from_the_history(pair, app_py):
    a, b = pair
    with http_clients.client(headers=bearer(), timeout=30) as http:
        sid = http.post(f"{a.http}/v1/sessions").json()["sessionId"]
        first = http.post(f"{a.http}/v1/sessions/{sid}/messages", json={"text": "say hello"})
        assert first.json()["outcome"] == "awaiting_input", first.text
        [waiting] = first.json()["approvals"]
        assert app_py.read_text() == BEFORE
        answer = {"approvals": {waiting["requestId"]: {"choice": "allow_once"}}}
        second = http.post(f"{b.http}/v1/sessions/{sid}/messages", json=answer)
    assert second.status_code == 200, second.text
    # B took the idle session over, ran the call A left waiting, then asked its own model
    assert (second.json()["outcome"], second.json()["reply"]) == ("completed", "Patched on B.")
    assert app_py.read_text() == AFTER


def test_rest_messages_through_the_other_worker_ask_and_get_their_answer_on_the_owner(pair, app_py):
    a, b = pair

    async def scenario() -> None:
        async with http_clients.async_client(headers=bearer(), timeout=30) as http:
            sid = (await http.post(f"{a.http}/v1/sessions")).json()["sessionId"]
            on_a, _ = await open_client(a.ws(sessionId=sid))  # A holds the session
            url = f"{b.http}/v1/sessions/{sid}/messages"
            first = await http.post(url, json={"text": "say hello"})
            assert first.status_code == 200, first.text
            assert first.json()["outcome"] == "awaiting_input"
            [waiting] = first.json()["approvals"]
            assert waiting["requestId"].startswith("approval-")  # this call of this reply
            assert waiting["callId"] == "call_1_1"
            assert "+    return 'hello'" in waiting["preview"]
            seen = await on_a.until("approval_request")
            assert without_agent_id(seen["data"]) == waiting
            await on_a.until("run_finished")
            assert app_py.read_text() == BEFORE

            wrong = await http.post(url, json={"approvals": {"nope": "allow once"}})
            assert (wrong.status_code, wrong.json()["code"]) == (404, "unknown_request")
            answer = {"approvals": {waiting["requestId"]: "allow once"}}
            second = await http.post(url, json=answer)
            assert second.status_code == 200, second.text
            assert (second.json()["outcome"], second.json()["reply"]) == (
                "completed",
                "Patched on A.",
            )
            assert second.json()["approvals"] == []
            assert (await on_a.until("run_finished"))["data"]["text"] == "Patched on A."

    drive(scenario(), timeout=SCENARIO_SECONDS)
    assert app_py.read_text() == AFTER


def test_neta_serve_with_two_workers_gets_approvals_whichever_worker_takes_each_client(
    tmp_path, redis_url, postgres_url
):
    (tmp_path / "app.py").write_text(BEFORE)
    environ = {"NETA_REDIS_URL": redis_url, "NETA_DATABASE_URL": postgres_url}
    turns = [PATCH, {"text": "Patched."}]
    proc, base = start_neta_serve(tmp_path, turns, "--workers", "2", environ=environ)
    ws = base.replace("http://", "ws://", 1) + f"/ws?token={SERVE_TOKEN}"
    try:

        async def scenario() -> None:
            asker, ready = await open_client(ws)
            sid = ready["sessionId"]
            await asker.send("user_message", sid, text="say hello")
            rid = (await asker.until("approval_request"))["data"]["requestId"]
            # clients on new connections, each taken by either worker, see it and answer it
            others = [await open_client(f"{ws}&sessionId={sid}") for _ in range(3)]
            for _, ready in others:
                assert [p["requestId"] for p in ready["data"]["pendingApprovals"]] == [rid]
            answerer = others[-1][0]
            await answerer.send("approval_response", sid, requestId=rid, choice="allow_once")
            for client in (asker, *(c for c, _ in others)):
                assert (await client.until("run_finished"))["data"]["text"] == "Patched."

        drive(scenario(), timeout=SCENARIO_SECONDS)
        assert (tmp_path / "app.py").read_text() == AFTER

        (tmp_path / "app.py").write_text(BEFORE)
        with http_clients.client(base_url=base, headers=bearer(), timeout=30) as http:
            sid = http.post("/v1/sessions").json()["sessionId"]
            first = http.post(f"/v1/sessions/{sid}/messages", json={"text": "say hello"}).json()
            rid = first["approvals"][0]["requestId"]
            call_id = first["approvals"][0]["callId"]
        assert (tmp_path / "app.py").read_text() == BEFORE
        with http_clients.client(base_url=base, headers=bearer(), timeout=30) as fresh:
            answer = {"approvals": {rid: {"choice": "allow_once"}}}
            second = fresh.post(f"/v1/sessions/{sid}/messages", json=answer)
        assert second.status_code == 200, second.text
        # the waiting call ran, approved, whichever worker took the request (what the model
        # says next depends on it: a worker loading the session replays its script anew)
        decided = [e for e in second.json()["events"] if e["type"] == "permission_decision"]
        assert (decided[0]["call_id"], decided[0]["action"]) == (call_id, "allow")
        assert (tmp_path / "app.py").read_text() == AFTER
    finally:
        proc.terminate()
        proc.wait(20)


def test_an_approval_left_by_a_worker_that_died_is_resolved_and_its_call_never_runs(pair, app_py):
    a, b = pair

    async def scenario() -> None:
        on_a, ready = await open_client(a.ws())
        sid = ready["sessionId"]
        on_b, _ = await open_client(b.ws(sessionId=sid))
        await on_a.send("user_message", sid, text="say hello")
        rid = (await on_b.until("approval_request"))["data"]["requestId"]
        a.proc.send_signal(signal.SIGKILL)
        a.proc.wait()
        resolved = await on_b.until("approval_resolved", timeout=LEASE_SECONDS * 4 + 5)
        assert resolved["data"] == {"requestId": rid, "outcome": "server_restarted", "choice": None}
        finished = await on_b.until("run_finished", timeout=LEASE_SECONDS * 4 + 5)
        assert finished["data"]["outcome"] == "interrupted"
        await on_b.send("approval_response", sid, requestId=rid, choice="allow_once")
        assert (await on_b.until("error"))["data"]["code"] == "expired"
        async with http_clients.async_client(headers=bearer(), timeout=30) as http:
            saved = (await http.get(f"{b.http}/v1/sessions/{sid}")).json()["messages"]
        assert [m["role"] for m in saved] == ["user", "assistant", "tool", "assistant"]
        assert saved[2]["content"] == APPROVAL_RESTART_NOTE

    drive(scenario(), timeout=SCENARIO_SECONDS)
    assert app_py.read_text() == BEFORE
