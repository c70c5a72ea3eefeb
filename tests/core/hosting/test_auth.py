"""Who may reach the agent: token, browser origin, and the address a request arrived on."""

import asyncio
import socket
import sqlite3
import stat

import httpx
import pytest

from neta.hosting.auth import is_loopback, refusal, served_url
from neta.hosting.config import HostConfig
from neta.hosting.store.sqlite import SqliteStore
from neta.providers.scripted import ScriptedProvider
from neta.server import create_app
from tests import http_clients
from tests.core.hosting.server_harness import builtin_pm


def test_request_arriving_off_loopback_without_a_token_is_refused_before_any_state(tmp_path):
    # as when the app is served on 0.0.0.0 by something other than ``neta serve``
    app = create_app(
        HostConfig(
            provider_factory=lambda: ScriptedProvider([]),
            home=tmp_path / "home",
            workspace=tmp_path,
            plugin_manager=builtin_pm(),
        )
    )
    hub = app.state.hub

    async def scenario():
        transport = httpx.ASGITransport(app=app)
        try:
            async with http_clients.async_client(
                transport=transport, base_url="http://192.168.1.20:8765"
            ) as lan:
                refused = await lan.post("/v1/sessions")
            async with http_clients.async_client(
                transport=transport, base_url="http://127.0.0.1:8765"
            ) as local:
                created = await local.post("/v1/sessions")
        finally:
            await hub.shutdown()
        return refused, created

    refused, created = asyncio.run(scenario())
    assert refused.status_code == 403
    assert created.status_code == 201
    with sqlite3.connect(hub.store.path) as db:
        assert db.execute("SELECT id FROM sessions").fetchall() == [(created.json()["sessionId"],)]


def test_with_a_token_the_token_decides_wherever_the_request_arrived():
    lan = ("192.168.1.20", 8765)
    assert refusal("t", authorization="Bearer t", server=lan) is None
    assert refusal("t", authorization=None, query_token="t", server=lan) is None
    assert refusal("t", authorization="Bearer x", query_token="t", server=lan)[0] == 401
    assert refusal("t", authorization=None, server=lan)[0] == 401
    assert refusal(None, authorization=None, server=("/run/neta.sock", None)) is None


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("::ffff:10.0.0.1", False),
        ("192.168.1.20", False),
        ("evil.example", False),
    ],
)
def test_loopback_addresses(host, loopback):
    assert is_loopback(host) is loopback


def test_the_session_database_is_readable_by_its_owner_only(tmp_path):
    store = SqliteStore(tmp_path / "home" / "neta.db")
    store.close()
    assert stat.S_IMODE((tmp_path / "home").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "home" / "neta.db").stat().st_mode) == 0o600


def test_without_a_token_a_request_for_another_host_name_is_refused(serve):
    # DNS rebinding: a page of evil.example whose name now resolves to 127.0.0.1 makes
    # same-origin requests; they arrive on loopback, with no Origin, but Host: evil.example
    server = serve([])
    with http_clients.client(base_url=server.http, timeout=30) as http:
        for path in ("/v1/sessions/nope", "/openapi.json"):
            refused = http.get(path, headers={"Host": "evil.example:8765"})
            assert refused.status_code == 403, path
        assert http.post("/v1/sessions", headers={"Host": "evil.example"}).status_code == 403
        for host in ("127.0.0.1:8765", "localhost", "[::1]:8765", "localhost.:8765"):
            assert http.get("/openapi.json", headers={"Host": host}).status_code == 200, host
    with sqlite3.connect(server.hub.store.path) as db:
        assert db.execute("SELECT id FROM sessions").fetchall() == []

    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(
            b"GET /ws HTTP/1.1\r\nHost: evil.example\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            b"Sec-WebSocket-Version: 13\r\n\r\n"
        )
        assert sock.recv(100).startswith(b"HTTP/1.1 403")


def test_with_a_token_the_api_spec_needs_it_too(serve):
    server = serve([], token="s3cret")
    with http_clients.client(base_url=server.http, timeout=30) as http:
        assert http.get("/openapi.json").status_code == 401
        bearer = http.get("/openapi.json", headers={"Authorization": "Bearer s3cret"})
        assert bearer.json()["info"]["title"] == "Neta"


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1", "http://127.0.0.1:8765"),
        ("localhost", "http://localhost:8765"),
        ("::1", "http://[::1]:8765"),
        ("::", "http://[::]:8765"),
        ("[::1]", "http://[::1]:8765"),
    ],
)
def test_the_address_a_server_prints_is_a_url_for_ipv6_hosts_too(host, url):
    assert served_url(host, 8765) == url
