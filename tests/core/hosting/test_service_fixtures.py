"""The shared service helpers: a missing server binary skips (or fails under CI); waiting for a
server started by a test."""

import subprocess
import sys
from http.server import BaseHTTPRequestHandler

import pytest

from tests.loopback_server import LoopbackServer
from tests.services import free_port, require, wait_until_serving


def test_a_missing_binary_skips_with_its_reason(monkeypatch):
    monkeypatch.delenv("NETA_REQUIRE_SERVICES", raising=False)
    with pytest.raises(pytest.skip.Exception, match="redis-server is not installed"):
        require(None, "redis-server")


def test_a_missing_binary_fails_when_services_are_required(monkeypatch):
    monkeypatch.setenv("NETA_REQUIRE_SERVICES", "1")
    with pytest.raises(pytest.fail.Exception, match="NETA_REQUIRE_SERVICES=1 but redis-server"):
        require(None, "redis-server")


def test_a_present_binary_is_used():
    assert require("/usr/bin/redis-server", "redis-server") == "/usr/bin/redis-server"


def test_waiting_for_a_server_that_exits_fails_at_once_with_its_log(tmp_path):
    log = tmp_path / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", "print('cannot bind'); raise SystemExit(3)"], stdout=out
        )
    # an hour to serve in: only a wait that looks at the process ends within the test's time
    with pytest.raises(AssertionError, match=r"exited with 3 before it served:\ncannot bind"):
        wait_until_serving(f"http://127.0.0.1:{free_port()}", proc, log, seconds=3600)


def test_waiting_for_a_server_ends_at_its_first_answer_whatever_the_status():
    asked = []

    class NotFound(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = LoopbackServer(NotFound)
    server.start()
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        wait_until_serving(server.root, proc, seconds=5)
        assert len(asked) == 1  # the 404 ended it: nothing asked again
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
        server.stop()
