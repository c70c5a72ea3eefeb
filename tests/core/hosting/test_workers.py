"""Two ``neta serve`` workers sharing Redis (the bus) and PostgreSQL (the store).

The tests of ``TestTwoWorkers`` share one pair of workers, A and B (starting a worker costs a
second or more of CPU). Each worker replays its own script, so the text of a reply tells which
worker ran it: A asks a question first, B answers "ok". A test that kills a worker starts a
third worker of its own beside them, and kills that one.
"""

from __future__ import annotations

import asyncio
import secrets
import signal
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from neta.hosting.interrupted import INTERRUPTED_NOTE, INTERRUPTED_REASON
from tests import http_clients
from tests.core.hosting.server_harness import ASK, Client, drive, open_client
from tests.services import (
    SERVE_TOKEN,
    bearer,
    new_database,
    spawn_neta_serve,
    wait_until_serving,
)

LEASE_SECONDS = 1.5
A_TURNS = [ASK, {"text": "blue it is"}, {"text": "again, from A"}]
B_TURNS = [{"text": "ok"}]
SESSIONS = 60
"""Sessions of the spread test: 20 at a time (the client's connections), three rounds of them."""
SCENARIO_SECONDS = 60
"""The longest a test's clients may take (a takeover waits for a lease to lapse)."""


class Worker:
    """One ``neta serve`` process replaying ``turns``; ``ready()`` waits until it serves."""

    def __init__(self, home: Path, name: str, environ: dict[str, str], turns: list[object]):
        lease = ("--lease-seconds", str(LEASE_SECONDS))
        self.proc, self.http, self.log = spawn_neta_serve(
            home, turns, *lease, name=name, environ=environ
        )
        self.interrupted = False

    def ready(self) -> Worker:
        wait_until_serving(self.http, self.proc, self.log)
        return self

    def ws(self, **query: str) -> str:
        """The WebSocket URL, with ``query`` and the token."""
        params = "&".join(f"{k}={v}" for k, v in {**query, "token": SERVE_TOKEN}.items())
        return self.http.replace("http://", "ws://", 1) + f"/ws?{params}"

    def interrupt(self) -> None:
        """Ask the worker to stop (Ctrl-C), once: a second one would cut its shutdown short."""
        if self.proc.poll() is None and not self.interrupted:
            self.interrupted = True
            self.proc.send_signal(signal.SIGINT)

    def stop(self) -> None:
        self.interrupt()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def asked_through_b(
    a: Worker, b: Worker, text: str
) -> tuple[Client, Client, str, dict[str, Any]]:
    """A client of ``a`` starts a run that asks; a client of ``b`` on that session sees it.

    Returns both clients, the session id and the question's frame.
    """
    on_a, ready = await open_client(a.ws())
    sid = ready["sessionId"]
    on_b, _ = await open_client(b.ws(sessionId=sid))
    await on_a.send("user_message", sid, text=text)
    return on_a, on_b, sid, await on_b.until("clarify_request")


class SharedWorkers:
    """Workers sharing one Redis and one PostgreSQL database: the pair ``a``, ``b``, and more."""

    def __init__(self, home: Path, redis_url: str, postgres_url: str) -> None:
        self.home = home
        self.env = {"NETA_REDIS_URL": redis_url, "NETA_DATABASE_URL": postgres_url}
        self.a = Worker(home, "a", self.env, A_TURNS)
        self.b = Worker(home, "b", self.env, B_TURNS)  # both start at once
        try:
            self.a.ready()
            self.b.ready()
        except BaseException:
            self.stop()
            raise

    def start(self, name: str, turns: list[object]) -> Worker:
        """Start one more worker beside the pair (the caller stops it)."""
        worker = Worker(self.home, name, self.env, turns)
        try:
            return worker.ready()
        except BaseException:
            worker.stop()
            raise

    def stop(self) -> None:
        for worker in (self.a, self.b):
            worker.interrupt()  # both stop at once
        for worker in (self.a, self.b):
            worker.stop()


@pytest.fixture(scope="class")
def workers(tmp_path_factory, redis_server, postgres_server):
    """The pair of workers the class's tests share, on an emptied Redis and a new database."""
    import redis

    client = redis.Redis.from_url(redis_server)
    try:
        client.flushall()
    finally:
        client.close()
    running = SharedWorkers(
        tmp_path_factory.mktemp("workers"), f"{redis_server}/0", new_database(postgres_server)
    )
    yield running
    running.stop()


@pytest.fixture
def third(workers):
    """Start a third worker with its own script; it is stopped (if still alive) after the test."""
    started: list[Worker] = []

    def start(turns: list[object]) -> Worker:
        worker = workers.start(f"c{len(started)}-{secrets.token_hex(3)}", turns)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()
        # shown if the test fails: a third worker's whole log (it ran for this test alone)
        print(f"--- {worker.log.name} ---\n{worker.log.read_text(errors='replace')}")


class TestTwoWorkers:
    """What clients of a session see through either of two workers, and when one dies."""

    @pytest.fixture(autouse=True)
    def _workers_logs(self, workers):
        """What the pair logged during the test (warnings, errors): shown if the test fails."""
        logs = [workers.a.log, workers.b.log]
        sizes = [log.stat().st_size for log in logs]
        yield
        for log, size in zip(logs, sizes, strict=True):
            with log.open(errors="replace") as lines:
                lines.seek(size)
                print(f"--- {log.name} during this test ---\n{lines.read()}")

    def test_a_question_asked_on_one_worker_is_answered_through_another(self, workers):
        a, b = workers.a, workers.b
        first = a.log.read_text()
        assert "store: PostgreSQL postgresql://neta@127.0.0.1" in first
        assert "bus: Redis redis://127.0.0.1" in first

        async def scenario() -> None:
            on_a, ready = await open_client(a.ws())
            sid = ready["sessionId"]
            on_b, _ = await open_client(b.ws(sessionId=sid))
            await on_a.send("user_message", sid, text="pick a colour")
            asked_a = await on_a.until("clarify_request")
            asked_b = await on_b.until("clarify_request")
            assert asked_a["data"] == asked_b["data"]
            assert asked_b["eventId"]
            await on_b.send(
                "clarify_response", sid, requestId=asked_b["data"]["requestId"], answer="blue"
            )
            for client in (on_a, on_b):
                resolved = await client.until("clarify_resolved")
                assert resolved["data"]["outcome"] == "answered"
                finished = await client.until("run_finished")
                assert (finished["data"]["outcome"], finished["data"]["text"]) == (
                    "completed",
                    "blue it is",
                )
            # both clients saw the same frames, in the same order
            kinds_a = [f["type"] for f in on_a.seen if "eventId" in f]
            kinds_b = [f["type"] for f in on_b.seen if "eventId" in f]
            assert kinds_a == kinds_b
            ids = [f["eventId"] for f in on_b.seen if "eventId" in f]
            assert ids == sorted(ids, key=lambda i: tuple(map(int, i.split("-"))))

            # a REST message to worker B for the session worker A holds runs on A
            async with http_clients.async_client(headers=bearer(), timeout=30) as http:
                reply = await http.post(
                    f"{b.http}/v1/sessions/{sid}/messages", json={"text": "again"}
                )
            assert reply.status_code == 200, reply.text
            assert (reply.json()["outcome"], reply.json()["reply"]) == (
                "completed",
                "again, from A",
            )
            assert reply.json()["events"][0]["type"] == "run_started"
            assert (await on_a.until("run_finished"))["data"]["text"] == "again, from A"
            await on_a.ws.close()
            await on_b.ws.close()

        drive(scenario(), timeout=SCENARIO_SECONDS)

    def test_a_command_the_owner_refuses_is_answered_to_its_sender_only(self, workers):
        a, b = workers.a, workers.b

        async def scenario() -> None:
            on_a, on_b, sid, asked = await asked_through_b(a, b, "pick a colour")
            # refused by A (it runs the session): the error goes back to B's client alone
            await on_b.send("clarify_response", sid, requestId="nope", answer="blue")
            refused = await on_b.next()
            assert (refused["type"], refused["data"]["code"]) == ("error", "unknown_request")
            assert "eventId" not in refused
            await on_b.send("user_message", sid, text="and now?")
            refused = await on_b.next()
            assert (refused["type"], refused["data"]["code"]) == ("error", "busy")
            async with http_clients.async_client(headers=bearer(), timeout=30) as http:
                busy = await http.post(f"{b.http}/v1/sessions/{sid}/messages", json={"text": "hi"})
            assert (busy.status_code, busy.json()["code"]) == (409, "busy")
            await on_b.send(
                "clarify_response", sid, requestId=asked["data"]["requestId"], answer="blue"
            )
            for client in (on_a, on_b):
                assert (await client.until("run_finished"))["data"]["text"] == "blue it is"
            await on_b.send("cancel_run", sid)
            refused = await on_b.next()
            assert (refused["type"], refused["data"]["code"]) == ("error", "not_running")
            # frames of the session reach both clients in order: an error sent to all would be
            # seen before this run's frames
            await on_a.send("user_message", sid, text="again")
            for client in (on_a, on_b):
                assert (await client.until("run_finished"))["data"]["text"] == "again, from A"
            assert [f for f in on_a.seen if f["type"] == "error"] == []
            assert [f["data"]["code"] for f in on_b.seen if f["type"] == "error"] == [
                "unknown_request",
                "busy",
                "not_running",
            ]
            await on_a.ws.close()
            await on_b.ws.close()

        drive(scenario(), timeout=SCENARIO_SECONDS)

    def test_another_sessions_question_is_an_unknown_request_on_its_worker_and_across(
        self, workers
    ):
        a, b = workers.a, workers.b

        async def scenario() -> None:
            on_a, on_b, sid, asked = await asked_through_b(a, b, "pick a colour")
            rid = asked["data"]["requestId"]
            other_on_a, ready = await open_client(a.ws())  # A holds this session too
            other = ready["sessionId"]
            other_on_b, _ = await open_client(b.ws(sessionId=other))
            refusals = []
            for client in (other_on_a, other_on_b):  # answered on A itself, and routed to A
                await client.send("clarify_response", other, requestId=rid, answer="blue")
                refusals.append((await client.until("error"))["data"])
            assert (
                refusals
                == [{"code": "unknown_request", "message": f"no question has id {rid!r}"}] * 2
            )
            await on_b.send("clarify_response", sid, requestId=rid, answer="blue")
            for client in (on_a, on_b):
                assert (await client.until("run_finished"))["data"]["text"] == "blue it is"
            for client in (on_a, on_b, other_on_a, other_on_b):
                await client.ws.close()

        drive(scenario(), timeout=SCENARIO_SECONDS)

    def test_a_client_reconnecting_with_its_last_event_id_misses_nothing(self, workers):
        a, b = workers.a, workers.b

        async def scenario() -> None:
            on_a, on_b, sid, asked = await asked_through_b(a, b, "go")
            last = asked["eventId"]
            await on_b.ws.close()  # B's client drops; the run goes on
            await on_a.send(
                "clarify_response", sid, requestId=asked["data"]["requestId"], answer="x"
            )
            await on_a.until("run_finished")
            again, _ = await open_client(b.ws(sessionId=sid, lastEventId=last))
            resolved = await again.until("clarify_resolved")
            assert resolved["data"]["outcome"] == "answered"
            finished = await again.until("run_finished")
            assert finished["data"]["outcome"] == "completed"
            assert all(f.get("eventId") != last for f in again.seen)
            await on_a.ws.close()
            await again.ws.close()

        drive(scenario(), timeout=SCENARIO_SECONDS)

    def test_a_worker_killed_mid_run_is_taken_over_and_its_question_reported(self, workers, third):
        a, b = third([ASK, {"text": "done"}]), workers.b

        async def scenario() -> None:
            _, on_b, sid, asked = await asked_through_b(a, b, "pick a colour")
            a.proc.send_signal(signal.SIGKILL)
            a.proc.wait()
            resolved = await on_b.until("clarify_resolved", timeout=LEASE_SECONDS * 4 + 5)
            assert resolved["data"] == {
                "requestId": asked["data"]["requestId"],
                "outcome": "server_restarted",
            }
            finished = await on_b.until("run_finished")
            assert finished["data"]["outcome"] == "interrupted"
            assert finished["data"]["reason"] == INTERRUPTED_REASON
            async with http_clients.async_client(headers=bearer(), timeout=30) as http:
                saved = (await http.get(f"{b.http}/v1/sessions/{sid}")).json()
            roles = [m["role"] for m in saved["messages"]]
            assert roles == ["user", "assistant", "tool", "assistant"]
            assert "restarted" in saved["messages"][2]["content"]
            assert saved["messages"][3]["content"] == INTERRUPTED_NOTE
            # the session lives on, on worker B now
            await on_b.send("user_message", sid, text="red")
            await on_b.until("run_started")
            await on_b.ws.close()

        drive(scenario(), timeout=SCENARIO_SECONDS)

    def test_a_live_owner_keeps_its_session_past_the_lease_time_by_its_heartbeat(self, workers):
        a, b = workers.a, workers.b

        async def scenario() -> None:
            # A's run goes on, waiting for the answer
            on_a, on_b, sid, asked = await asked_through_b(a, b, "take your time")
            await asyncio.sleep(LEASE_SECONDS * 2)  # past the lease's time: only beats kept it
            await on_b.send("user_message", sid, text="mine now?")
            refused = await on_b.next()
            assert (refused["type"], refused["data"]["code"]) == ("error", "busy")  # A runs it
            await on_b.send(
                "clarify_response", sid, requestId=asked["data"]["requestId"], answer="blue"
            )
            for client in (on_a, on_b):
                finished = await client.until("run_finished")
                assert (finished["data"]["outcome"], finished["data"]["text"]) == (
                    "completed",
                    "blue it is",
                )
                resolved = [
                    f["data"]["outcome"] for f in client.seen if f["type"] == "clarify_resolved"
                ]
                assert resolved == ["answered"]
            await on_a.ws.close()
            await on_b.ws.close()

        drive(scenario(), timeout=SCENARIO_SECONDS)

    def test_sessions_spread_over_two_workers_each_run_where_its_message_arrives(self, workers):
        a, b = workers.a, workers.b

        async def scenario() -> None:
            limits = httpx.Limits(max_connections=20)
            async with http_clients.async_client(
                headers=bearer(), timeout=60, limits=limits
            ) as http:

                async def one(n: int) -> tuple[str, str]:
                    base = (a, b)[n % 2].http
                    sid = (await http.post(f"{base}/v1/sessions")).json()["sessionId"]
                    other = (b, a)[n % 2].http
                    reply = await http.post(
                        f"{other}/v1/sessions/{sid}/messages", json={"text": "hi"}
                    )
                    assert reply.status_code == 200, reply.text
                    return (reply.json()["outcome"], reply.json()["reply"])

                replies = await asyncio.gather(*(one(n) for n in range(SESSIONS)))
            # even: made on A, messaged through B, run by B; odd: the other way round
            assert replies[0::2] == [("completed", "ok")] * (SESSIONS // 2)
            assert {outcome for outcome, _ in replies[1::2]} == {"awaiting_input"}
            assert all("Which colour?" in text for _, text in replies[1::2])
            assert len(replies) == SESSIONS

        drive(scenario(), timeout=SCENARIO_SECONDS)

    def test_a_run_whose_worker_dies_without_a_question_ends_interrupted_for_every_client(
        self, workers, third
    ):
        a, b = third([{"text": "too late", "delay": 60}]), workers.b

        async def scenario() -> None:
            on_a, ready = await open_client(a.ws())
            sid = ready["sessionId"]
            async with http_clients.async_client(headers=bearer(), timeout=60) as http:
                # a REST message through B for the session A holds runs on A, and waits for its end
                routed = asyncio.create_task(
                    http.post(f"{b.http}/v1/sessions/{sid}/messages", json={"text": "think hard"})
                )
                started = await on_a.until("run_started")
                a.proc.send_signal(signal.SIGKILL)
                a.proc.wait()
                # A's client comes back on B with the last event id it saw
                again, _ = await open_client(b.ws(sessionId=sid, lastEventId=started["eventId"]))
                finished = await again.until("run_finished", timeout=LEASE_SECONDS * 4 + 5)
                assert finished["data"]["outcome"] == "interrupted"
                assert finished["data"]["reason"] == INTERRUPTED_REASON
                reply = await routed
                saved = (await http.get(f"{b.http}/v1/sessions/{sid}")).json()
            assert reply.status_code == 200, reply.text
            assert (reply.json()["outcome"], reply.json()["reason"]) == (
                "interrupted",
                INTERRUPTED_REASON,
            )
            assert [(m["role"], m["content"]) for m in saved["messages"]] == [
                ("user", "think hard"),
                ("assistant", INTERRUPTED_NOTE),
            ]
            await again.send("ping", sid)
            await again.until("pong")
            assert [f["type"] for f in again.seen].count("run_finished") == 1
            await again.ws.close()

        drive(scenario(), timeout=SCENARIO_SECONDS)

    def test_a_run_that_ends_normally_is_never_reported_interrupted(self, workers):
        a, b = workers.a, workers.b

        async def scenario() -> None:
            on_b, ready = await open_client(b.ws())
            sid = ready["sessionId"]
            async with http_clients.async_client(headers=bearer(), timeout=30) as http:
                reply = await http.post(f"{a.http}/v1/sessions/{sid}/messages", json={"text": "hi"})
                assert reply.json()["reply"] == "ok"  # run by B, which holds the session
                started = await on_b.until("run_started")
                await on_b.until("run_finished")
                # with no client left, no worker holds the session: were its run still marked
                # going, a heartbeat would take it for a run whose worker died
                await on_b.ws.close()
                await asyncio.sleep(LEASE_SECONDS * 2)  # several heartbeats of both workers
                saved = (await http.get(f"{a.http}/v1/sessions/{sid}")).json()
            assert [(m["role"], m["content"]) for m in saved["messages"]] == [
                ("user", "hi"),
                ("assistant", "ok"),
            ]
            again, _ = await open_client(a.ws(sessionId=sid, lastEventId=started["eventId"]))
            assert (await again.until("run_finished"))["data"]["outcome"] == "completed"
            await again.send("ping", sid)
            await again.until("pong")
            assert [f["type"] for f in again.seen].count("run_finished") == 1
            await again.ws.close()

        drive(scenario(), timeout=SCENARIO_SECONDS)
