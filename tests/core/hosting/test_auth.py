"""Who may reach the agent: token, browser origin, and the address a request arrived on."""

import asyncio
import sqlite3
import stat

import httpx
import pytest

from neta.hosting.auth import is_loopback, refusal
from neta.hosting.config import HostConfig
from neta.hosting.store import SessionStore
from neta.providers.scripted import ScriptedProvider
from neta.server import create_app
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
            async with httpx.AsyncClient(
                transport=transport, base_url="http://192.168.1.20:8765"
            ) as lan:
                refused = await lan.post("/v1/sessions")
            async with httpx.AsyncClient(
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
    store = SessionStore(tmp_path / "home" / "neta.db")
    store.close()
    assert stat.S_IMODE((tmp_path / "home").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "home" / "neta.db").stat().st_mode) == 0o600
