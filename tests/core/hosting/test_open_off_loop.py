"""Opening a session on a store on a network (PostgreSQL) never holds up the event loop.

A connection or request that opens, claims or releases a session waits on the database in
its own task; the worker's other connections go on meanwhile. Two of them opening the same
session at once still share one copy of it in memory."""

from __future__ import annotations

import asyncio
import threading

from tests import http_clients
from tests.core.hosting.server_harness import drive, open_client
from tests.core.hosting.table_locks import hold_table, until_waited_on


async def _answered_while_held(client, session_id: str, released: threading.Event) -> bool:
    """Whether a ping on ``client`` was answered while the table was still locked: a server
    whose event loop waited on the database answers nothing until the lock is gone."""
    await client.send("ping", session_id)
    assert (await client.until("pong", timeout=10))["type"] == "pong"
    return not released.is_set()


def test_a_connection_opening_a_session_while_the_database_waits_holds_up_no_other(
    serve, postgres_url
):
    server = serve([{"text": "done"}], database_url=postgres_url)

    async def scenario() -> None:
        busy, ready = await open_client(server.ws_url())
        other = ready["sessionId"]
        async with http_clients.async_client(base_url=server.http) as http:
            quiet = (await http.post("/v1/sessions")).json()["sessionId"]
        held = hold_table(postgres_url, "leases")  # claiming a session waits for it
        opening = asyncio.create_task(open_client(server.ws_url(sessionId=quiet)))
        await until_waited_on(postgres_url, "leases")
        answered = await _answered_while_held(busy, other, held.released)
        waited = not opening.done()
        held.let_go()
        _, reopened = await asyncio.wait_for(opening, 10)
        assert answered  # a ping was answered while the opening waited on the database
        assert waited
        assert reopened["sessionId"] == quiet

    drive(scenario())


def test_a_request_opening_a_session_while_the_database_waits_holds_up_no_connection(
    serve, postgres_url
):
    server = serve([{"text": "done"}], database_url=postgres_url)

    async def scenario() -> None:
        busy, ready = await open_client(server.ws_url())
        other = ready["sessionId"]
        async with http_clients.async_client(base_url=server.http, timeout=10) as http:
            quiet = (await http.post("/v1/sessions")).json()["sessionId"]
            held = hold_table(postgres_url, "leases")
            message = asyncio.create_task(
                http.post(f"/v1/sessions/{quiet}/messages", json={"text": "hi"})
            )
            await until_waited_on(postgres_url, "leases")
            answered = await _answered_while_held(busy, other, held.released)
            waited = not message.done()
            held.let_go()
            reply = await asyncio.wait_for(message, 10)
        assert answered
        assert waited
        assert reply.status_code == 200, reply.text
        assert reply.json()["reply"] == "done"

    drive(scenario())


def test_a_connection_and_a_request_opening_one_session_at_once_share_it(serve, postgres_url):
    maker = serve([{"text": "done"}], database_url=postgres_url)
    server = serve([{"text": "done"}, {"text": "done"}], database_url=postgres_url)

    async def scenario() -> None:
        async with http_clients.async_client(timeout=10) as http:
            made = await http.post(f"{maker.http}/v1/sessions")
            shared = made.json()["sessionId"]  # on disk only, for ``server``
            held = hold_table(postgres_url, "todos", "ACCESS EXCLUSIVE")  # loading waits
            opening = asyncio.create_task(open_client(server.ws_url(sessionId=shared)))
            await asyncio.sleep(0.1)
            message = asyncio.create_task(
                http.post(f"{server.http}/v1/sessions/{shared}/messages", json={"text": "hi"})
            )
            await asyncio.sleep(0.2)  # both wait for the session to load
            held.let_go()
            watcher, ready = await asyncio.wait_for(opening, 10)
            reply = await asyncio.wait_for(message, 10)
            assert ready["sessionId"] == shared
            assert reply.status_code == 200, reply.text
            assert reply.json()["reply"] == "done"
            # the connection's copy of the session is the one the request ran
            finished = await watcher.until("run_finished")
            assert finished["data"]["text"] == "done"
            assert [f["type"] for f in watcher.seen].count("run_started") == 1
            again = await http.post(
                f"{server.http}/v1/sessions/{shared}/messages", json={"text": "more"}
            )
            view = (await http.get(f"{server.http}/v1/sessions/{shared}")).json()
        assert again.status_code == 200, again.text
        assert [m["content"] for m in view["messages"]] == ["hi", "done", "more", "done"]

    drive(scenario())


def test_a_message_claiming_its_session_while_the_database_waits_holds_up_no_connection(
    serve, postgres_url
):
    server = serve([{"text": "done"}], database_url=postgres_url)

    async def scenario() -> None:
        busy, ready = await open_client(server.ws_url())
        writer, writing = await open_client(server.ws_url())
        held = hold_table(postgres_url, "leases")  # the message's claim waits
        await writer.send("user_message", writing["sessionId"], text="hi")
        await until_waited_on(postgres_url, "leases")
        answered = await _answered_while_held(busy, ready["sessionId"], held.released)
        held.let_go()
        finished = await writer.until("run_finished")
        assert answered
        assert finished["data"]["text"] == "done"

    drive(scenario())


def test_reading_and_deleting_a_session_while_the_database_waits_hold_up_no_connection(
    serve, postgres_url
):
    server = serve([{"text": "done"}], database_url=postgres_url)

    async def scenario() -> None:
        busy, ready = await open_client(server.ws_url())
        async with http_clients.async_client(base_url=server.http, timeout=10) as http:
            quiet = (await http.post("/v1/sessions")).json()["sessionId"]
            for method, table, mode, status in (
                ("GET", "messages", "ACCESS EXCLUSIVE", 200),  # reading waits
                ("DELETE", "leases", "EXCLUSIVE", 204),  # claiming it to delete waits
            ):
                held = hold_table(postgres_url, table, mode)
                request = asyncio.create_task(http.request(method, f"/v1/sessions/{quiet}"))
                await until_waited_on(postgres_url, table)
                answered = await _answered_while_held(busy, ready["sessionId"], held.released)
                waited = not request.done()
                held.let_go()
                answer = await asyncio.wait_for(request, 10)
                assert answered, method
                assert waited
                assert answer.status_code == status, answer.text
            gone = await http.get(f"/v1/sessions/{quiet}")
        assert gone.status_code == 404

    drive(scenario())
