"""The console's files and the WebSocket token a browser can send, over a real server."""

import asyncio
import base64
import json

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from neta.console import STATIC
from tests import http_clients
from tests.core.console.harness import serve

HELLO = {"hello": [{"text": "Hi."}]}


@pytest.fixture
def server(tmp_path):
    running = serve(HELLO, tmp_path)
    yield running
    running.stop()


@pytest.fixture
def token_server(tmp_path):
    running = serve(HELLO, tmp_path, token="s3cret-ü")
    yield running
    running.stop()


def bearer_protocol(token: str) -> str:
    encoded = base64.urlsafe_b64encode(token.encode("utf-8")).decode("ascii").rstrip("=")
    return f"neta.bearer.{encoded}"


async def first_frame(url, **kwargs):
    async with connect(url, open_timeout=5, **kwargs) as ws:
        frame = json.loads(await asyncio.wait_for(ws.recv(), 5))
        return ws.subprotocol, frame


def test_page_and_its_modules_are_served_with_a_strict_policy(server):
    page = http_clients.get(server.url)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/console/main.js">' in page.text
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    with http_clients.client() as http:
        modules = {
            path.name: http.get(f"{server.url}console/{path.name}")
            for path in sorted(STATIC.glob("*.js"))
        }
    for name, module in modules.items():
        assert module.status_code == 200, name
        assert module.headers["content-type"].startswith("text/javascript")
        assert "http://" not in module.text
        assert "https://" not in module.text.replace("[links](https://...)", "")
    style = http_clients.get(f"{server.url}console/console.css")
    assert style.headers["content-type"].startswith("text/css")


def test_head_asks_for_the_page_and_its_files_as_get_does(server):
    # a load balancer's or a link checker's HEAD: the headers of a GET, no body
    with http_clients.client() as http:
        for path in ("", "console/main.js", "console/config.json"):
            head, get = http.head(f"{server.url}{path}"), http.get(f"{server.url}{path}")
            assert (head.status_code, head.content) == (200, b""), path
            assert head.headers["content-type"] == get.headers["content-type"], path


def test_only_the_consoles_own_files_are_served(server):
    for path in ("console/..%2Fserver.py", "console/__init__.py", "console/nothing.js"):
        assert http_clients.get(server.url + path).status_code == 404, path


def test_config_says_whether_a_token_is_needed(server, token_server):
    open_config = http_clients.get(f"{server.url}console/config.json").json()
    assert open_config["tokenRequired"] is False
    assert open_config["clarifyTimeout"] == 300.0  # a person's time to answer, by default
    assert open_config["tokenProtocol"] == "neta.bearer."
    guarded = http_clients.get(f"{token_server.url}console/config.json").json()
    assert guarded["tokenRequired"] is True
    assert "s3cret" not in json.dumps(guarded)


def test_config_without_a_token_gives_the_model_and_the_workspace_folder_not_its_path(tmp_path):
    running = serve(HELLO, tmp_path, model="test-model")
    try:
        config = http_clients.get(f"{running.url}console/config.json").json()
    finally:
        running.stop()
    assert config["model"] == "test-model"
    assert config["workspace"] == "workspace"
    assert "workspacePath" not in config
    assert str(tmp_path) not in json.dumps(config)


def test_config_gives_the_model_and_workspace_path_only_to_a_request_with_the_token(tmp_path):
    running = serve(HELLO, tmp_path, model="test-model", token="plain-token")
    url = f"{running.url}console/config.json"
    try:
        anyone = http_clients.get(url).json()
        wrong = http_clients.get(url, headers={"Authorization": "Bearer wrong"}).json()
        holder = http_clients.get(url, headers={"Authorization": "Bearer plain-token"}).json()
    finally:
        running.stop()
    for refused in (anyone, wrong):
        assert {"model", "workspace", "workspacePath"}.isdisjoint(refused)
    assert holder["model"] == "test-model"
    assert holder["workspace"] == "workspace"
    assert holder["workspacePath"] == str(running.hub.config.workspace)


def test_without_a_token_a_foreign_web_page_cannot_load_the_console(server):
    refused = http_clients.get(server.url, headers={"Origin": "http://evil.example"})
    assert refused.status_code == 403
    assert http_clients.get(
        server.url, headers={"Origin": f"http://localhost:{server.port}"}
    ).is_success


def test_without_a_token_the_console_answers_only_loopback_host_names(server, token_server):
    for host in ("evil.example", f"evil.example:{server.port}", "10.0.0.7"):
        response = http_clients.get(f"{server.url}console/config.json", headers={"Host": host})
        assert response.status_code == 403, host
    for host in (f"localhost:{server.port}", f"[::1]:{server.port}", "127.0.0.1"):
        assert http_clients.get(server.url, headers={"Host": host}).is_success, host
    # with a token the token decides: the page loads under any name and asks for it
    assert http_clients.get(token_server.url, headers={"Host": "neta.example"}).is_success


def test_websocket_accepts_the_token_as_a_subprotocol(token_server):
    url = f"ws://127.0.0.1:{token_server.port}/ws"
    protocols = ["neta", bearer_protocol("s3cret-ü")]
    chosen, frame = asyncio.run(first_frame(url, subprotocols=protocols))
    assert chosen == "neta"
    assert frame["type"] == "session_ready"


def test_websocket_refuses_a_wrong_or_garbled_subprotocol_token(token_server):
    url = f"ws://127.0.0.1:{token_server.port}/ws"
    for offered in (bearer_protocol("wrong"), "neta.bearer.%%%", None):
        protocols = ["neta", offered] if offered else ["neta"]
        with pytest.raises(InvalidStatus) as refused:
            asyncio.run(first_frame(url, subprotocols=protocols))
        assert refused.value.response.status_code == 403, offered
    assert token_server.hub.store.exists("nothing") is False


def test_websocket_header_token_still_wins_over_a_subprotocol(token_server):
    url = f"ws://127.0.0.1:{token_server.port}/ws"
    headers = {"Authorization": "Bearer wrong"}
    protocols = ["neta", bearer_protocol("s3cret-ü")]
    with pytest.raises(InvalidStatus):
        asyncio.run(first_frame(url, subprotocols=protocols, additional_headers=headers))


def test_websocket_without_subprotocols_is_accepted_as_before(server):
    chosen, frame = asyncio.run(first_frame(f"ws://127.0.0.1:{server.port}/ws"))
    assert chosen is None
    assert frame["type"] == "session_ready"
