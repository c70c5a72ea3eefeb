"""``neta serve`` as a real process."""

import asyncio
import contextlib
import re
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from neta.errors import ConfigError
from neta.hosting.auth import check_exposure
from neta.hosting.store.sqlite import SqliteStore
from tests import http_clients
from tests.core.cli.cli_runner import neta_in_process
from tests.services import SERVE_TOKEN, bearer, free_port, neta_environ, start_neta_serve


def env():
    return neta_environ()


def test_serve_off_loopback_without_a_token_refuses_to_start(tmp_path):
    done = neta_in_process("serve", "--host", "0.0.0.0", "-w", str(tmp_path), env=env())
    assert done.returncode == 2
    assert done.stderr.startswith("Error: binding to 0.0.0.0 exposes the agent")


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "10.0.0.5", "", "example.com"])
def test_any_address_but_loopback_needs_a_token(host):
    with pytest.raises(ConfigError, match="exposes the agent"):
        check_exposure(host, None)
    with pytest.raises(ConfigError):
        check_exposure(host, "")
    check_exposure(host, "s3cret")


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_needs_no_token(host):
    check_exposure(host, None)


@pytest.fixture(scope="module")
def default_serve(tmp_path_factory):
    """One ``neta serve`` with the default options for the tests that only talk to it."""
    root = tmp_path_factory.mktemp("default-serve")
    proc, base = start_neta_serve(root, [{"text": "served"}])
    yield root, base
    proc.terminate()
    proc.wait(timeout=15)


def test_serve_answers_rest_with_the_scripted_provider(default_serve):
    root, base = default_serve
    sid = http_clients.post(f"{base}/v1/sessions", headers=bearer()).json()["sessionId"]
    reply = http_clients.post(
        f"{base}/v1/sessions/{sid}/messages", json={"text": "hi"}, headers=bearer(), timeout=30
    )
    assert reply.json()["reply"] == "served"
    assert (root / "home" / "neta.db").exists()


async def _open_websocket(url):
    async with connect(url):
        pass


def test_serve_without_a_token_makes_one_says_it_once_and_refuses_requests_without_it(tmp_path):
    proc, base = start_neta_serve(tmp_path, [{"text": "served"}], token=None)
    try:
        assert http_clients.get(f"{base}/v1/sessions/nope").status_code == 401
        with pytest.raises(InvalidStatus):
            asyncio.run(_open_websocket(base.replace("http://", "ws://", 1) + "/ws"))
        printed = (tmp_path / "serve.log").read_text()
        [token] = re.findall(rf"^Token for {re.escape(base)}: (\S+) ", printed, re.MULTILINE)
        assert len(token) >= 43  # secrets.token_urlsafe(32)
        assert printed.count(token) == 1
        sid = http_clients.post(f"{base}/v1/sessions", headers=bearer(token)).json()["sessionId"]
        reply = http_clients.post(
            f"{base}/v1/sessions/{sid}/messages", json={"text": "hi"}, headers=bearer(token)
        )
        assert reply.json()["reply"] == "served"
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def _get_on(sock):
    """Send a keep-alive GET (with the token) on ``sock``; the status line of the answer, or b""
    if it was closed."""
    sock.sendall(
        b"GET /v1/sessions/nope HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Authorization: Bearer " + SERVE_TOKEN.encode() + b"\r\n\r\n"
    )
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        if not chunk:
            return b""
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    length = int(
        next(
            h.split(b":")[1] for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")
        )
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head.split(b"\r\n")[0]


def _closed_by_peer(sock, within):
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False


def _post_ignoring_the_end(url, body):
    with contextlib.suppress(httpx.HTTPError):  # the server goes away while it waits
        http_clients.post(url, json=body, headers=bearer(), timeout=60)


def test_serve_closes_idle_connections_after_its_keep_alive_and_stops_without_waiting_for_a_run(
    tmp_path,
):
    # one server for both (each costs a process): --timeout-keep-alive, then stopping it
    proc, base = start_neta_serve(
        tmp_path,
        [{"text": "much later", "delay": 15}],
        "--timeout-keep-alive", "1", "--drain-timeout", "1",
    )  # fmt: skip
    port = int(base.rsplit(":", 1)[1])
    try:
        with socket.create_connection(("127.0.0.1", port)) as sock:
            assert _get_on(sock) == b"HTTP/1.1 404 Not Found"
            started = time.monotonic()
            # closed by the 1 s asked for, not by the 75 s default; and not before it
            assert _closed_by_peer(sock, within=10)
            assert time.monotonic() - started > 0.5
        # stopping it does not wait for a long run, and keeps the run's message
        sid = http_clients.post(f"{base}/v1/sessions", headers=bearer()).json()["sessionId"]
        with http_clients.client(base_url=base, headers=bearer(), timeout=30) as http:
            pending = threading.Thread(  # a client waiting on the run
                target=_post_ignoring_the_end,
                args=(f"{base}/v1/sessions/{sid}/messages", {"text": "take your time"}),
                daemon=True,
            )
            pending.start()
            deadline = time.monotonic() + 15
            while not http.get(f"/v1/sessions/{sid}").json()["running"]:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        # it lets the run go on for --drain-timeout (1 s), then cuts it: had it waited for
        # the run instead, the run would have ended, its answer kept
        proc.terminate()
        proc.wait(timeout=30)
        pending.join(timeout=20)
        assert not pending.is_alive()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    store = SqliteStore(tmp_path / "home" / "neta.db")
    history = store.load(sid).history
    store.close()
    assert [m.role for m in history] == ["user", "assistant"]
    assert history[0].content == "take your time"
    assert history[1].content.startswith("[interrupted]")  # the run's end, noted


def test_idle_keep_alive_connections_outlive_the_clients_pool_expiry_by_default(default_serve):
    # httpx drops an idle pooled connection after 5 s; a server closing at the same moment
    # races it, and the client's next request on that connection fails with ReadError
    _, base = default_serve
    port = int(base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)) as sock:
        assert _get_on(sock) == b"HTTP/1.1 404 Not Found"
        assert not _closed_by_peer(sock, within=httpx.Limits().keepalive_expiry + 0.5)
        assert _get_on(sock) == b"HTTP/1.1 404 Not Found"


SECRET = "SECRET-7f3a"


def _printed_by_serve(root, redis):
    """Stdout and stderr of a ``neta serve`` whose Redis and model URLs hold credentials, from
    its start until it has served (or failed) for a while."""
    command = [
        sys.executable, "-m", "neta", "serve", "--port", str(free_port()), "-w", str(root),
        "-p", "openai", "--base-url", f"http://u:{SECRET}@127.0.0.1:9/v1?api-key={SECRET}",
    ]  # fmt: skip
    environ = neta_environ(NETA_HOME=str(root / "home"), NETA_REDIS_URL=redis, NETA_TOKEN="t")
    out, err = root / "serve.out", root / "serve.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        proc = subprocess.Popen(command, env=environ, stdout=stdout, stderr=stderr)
    try:
        deadline = time.monotonic() + 30
        while "bus:" not in out.read_text() and proc.poll() is None:
            assert time.monotonic() < deadline, err.read_text()
            time.sleep(0.05)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=2)  # the bus fails meanwhile, and says so
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    return out.read_text(), err.read_text()


def test_serve_masks_the_credentials_of_a_redis_url_nothing_listens_on(tmp_path):
    redis = f"redis://:{SECRET}@127.0.0.1:{free_port()}/0?password={SECRET}"
    stdout, stderr = _printed_by_serve(tmp_path, redis)
    # it refuses to start, and says why
    assert "Error: Redis: the bus cannot reach redis://:***@127.0.0.1:" in stderr
    assert SECRET not in stdout + stderr


def test_serve_masks_the_credentials_a_real_redis_refuses(tmp_path, redis_url):
    host = redis_url.removeprefix("redis://")
    redis = f"redis://nobody:{SECRET}@{host}?password={SECRET}"  # no such user: refused
    stdout, stderr = _printed_by_serve(tmp_path, redis)
    assert "Error: Redis: the bus cannot reach redis://nobody:***@127.0.0.1:" in stderr
    assert "invalid username-password pair" in stderr
    assert SECRET not in stdout + stderr


@pytest.mark.parametrize(
    ("given", "seconds"), [("30d", 2_592_000), ("12h", 43_200), ("90m", 5_400), ("45", 45)]
)
def test_session_ttl_reads_a_duration(given, seconds):
    from neta.cli.serve_cmd import duration_seconds

    assert duration_seconds(given) == seconds


@pytest.mark.parametrize("given", ["soon", "0", "-3h", "d", "infd"])
def test_session_ttl_refuses_what_is_not_a_duration_before_serving(given, tmp_path):
    done = neta_in_process("serve", "--session-ttl", given, "-w", str(tmp_path), env=env())
    assert done.returncode == 2
    assert "--session-ttl" in done.stderr
    assert "not a duration" in done.stderr
