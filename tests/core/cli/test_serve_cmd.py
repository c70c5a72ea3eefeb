"""``neta serve`` as a real process."""

import json
import os
import socket
import subprocess
import sys
import time

import httpx


def env():
    return {k: v for k, v in os.environ.items() if not k.startswith(("NETA_", "OPENAI_"))}


def test_serve_off_loopback_without_a_token_refuses_to_start(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "neta", "serve", "--host", "0.0.0.0", "-w", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("Error: binding to 0.0.0.0 exposes the agent")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_serve_answers_rest_with_the_scripted_provider(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "served"}]}))
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "neta",
            "serve",
            "--port",
            str(port),
            "-p",
            "scripted",
            "--script",
            str(script),
            "-w",
            str(tmp_path),
        ],
        env={**env(), "NETA_HOME": str(tmp_path / "home")},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{base}/openapi.json", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None, (tmp_path / "serve.log").read_text()
                assert time.monotonic() < deadline
                time.sleep(0.1)
        sid = httpx.post(f"{base}/v1/sessions").json()["sessionId"]
        reply = httpx.post(f"{base}/v1/sessions/{sid}/messages", json={"text": "hi"}, timeout=30)
        assert reply.json()["reply"] == "served"
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        log.close()
    assert (tmp_path / "home" / "neta.db").exists()
