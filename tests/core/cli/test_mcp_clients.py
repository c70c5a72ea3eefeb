"""``neta mcp serve --http``'s sessions: one per MCP client session, ended with it or when idle.

The two real clients of ``test_mcp_serve.py`` show the sessions apart; here, when they end.
"""

import asyncio
import socket
import threading
import time

import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import neta
import neta_planning.plugin
from neta.cli.mcp_clients import ClientSessions
from neta.cli.mcp_server import SessionServer
from neta.runtime.agent import Agent


class Ended:
    """Records the sessions the plugins are told ended."""

    def __init__(self):
        self.ids = []

    @neta.hookimpl
    def neta_session_end(self, session):
        self.ids.append(session.session_id)


@pytest.fixture
def ended():
    return Ended()


@pytest.fixture
def agent(tmp_path, ended):
    pm = neta.create_plugin_manager(
        load_entrypoints=False,
        plugins=[("planning", neta_planning.plugin), ("ended", ended)],
    )
    return Agent(provider=None, plugin_manager=pm, workspace=tmp_path)


async def nothing(scope, receive, send):
    pass


def request(method, mcp_session_id):
    return {"type": "http", "method": method, "headers": [(b"mcp-session-id", mcp_session_id)]}


def test_each_mcp_session_has_a_neta_session_of_its_own(agent):
    clients = ClientSessions(agent)
    first, second = clients.session("one"), clients.session("two")
    assert first.session.session_id != second.session.session_id
    assert first.session.context.todo_store is not second.session.context.todo_store
    assert clients.session("one") is first
    clients.close()


def test_a_client_ending_its_mcp_session_ends_its_neta_session(agent, ended):
    clients = ClientSessions(agent)
    leaving = clients.session("leaving").session.session_id
    staying = clients.session("staying")
    app = clients.watch(nothing)
    asyncio.run(app(request("POST", b"staying"), None, None))
    asyncio.run(app(request("DELETE", b"leaving"), None, None))
    assert ended.ids == [leaving]
    assert "leaving" not in clients
    assert clients.session("staying") is staying
    clients.close()


def test_an_idle_session_ends_unless_a_call_is_running(agent, ended):
    clients = ClientSessions(agent, idle_timeout=0.05)
    idle = clients.session("idle").session.session_id
    clients.session("busy").running = 1
    time.sleep(0.1)
    asyncio.run(clients.end_idle())
    assert ended.ids == [idle]
    assert len(clients) == 1
    clients.close()


def test_a_session_whose_mcp_session_the_sdk_ended_ends_unless_a_call_is_running(agent, ended):
    clients = ClientSessions(agent)
    clients.http_app(SessionServer(clients.session_for).build(), host="127.0.0.1")
    forgotten = clients.session("forgotten").session.session_id  # the SDK has no such session
    clients.session("busy").running = 1
    asyncio.run(clients.end_idle())
    assert ended.ids == [forgotten]
    assert len(clients) == 1
    clients.close()


def test_stopping_the_server_ends_every_session(agent, ended):
    clients = ClientSessions(agent)
    ids = [clients.session(key).session.session_id for key in ("a", "b")]
    clients.close()
    assert sorted(ended.ids) == sorted(ids)
    assert len(clients) == 0


def test_a_real_client_leaving_ends_its_session(agent, ended):
    clients = ClientSessions(agent)
    app = clients.http_app(SessionServer(clients.session_for).build(), host="127.0.0.1")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"

    async def visit():
        http = httpx2.AsyncClient(verify=neta.tls_client_context())
        async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as c:
            await c.call_tool("todo", {})
            return len(clients)

    try:
        during = asyncio.run(visit())
    finally:
        server.should_exit = True
        thread.join(timeout=15)
    assert during == 1
    assert len(clients) == 0
    assert len(ended.ids) == 1
