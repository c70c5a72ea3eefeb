"""A prompt-injected model against the real ``neta serve``: what its ``bash`` call could take.

The model (the fake OpenAI server) asks for one command that tries every way out an outside
review found: the host's environment through ``/proc``, the workers' settings, the cluster's
Redis and PostgreSQL (their URLs carry passwords, and their ports are on loopback), a file
outside the workspace, and a process that outlives the call. What the command printed comes
back to the model as the tool's result, so the second request the fake server received shows
exactly what an attacker would have learnt.
"""

import json
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests import http_clients
from tests.fake_openai import FakeOpenAI, Reply
from tests.processes import wait_none_running_with
from tests.services import (
    _stop,
    _wait_for_port,
    bearer,
    free_port,
    neta_environ,
    require,
    require_sandbox,
    wait_until_serving,
)

SECRET = "s3cr3t" + secrets.token_hex(6)
TOKEN = f"token-{SECRET}"


@pytest.fixture
def guarded_redis():
    """A Redis server of its own that wants a password: its URL carries the secret."""
    binary = require(shutil.which("redis-server"), "redis-server")
    port = free_port()
    with tempfile.TemporaryDirectory() as workdir:
        proc = subprocess.Popen(
            [
                *(binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""),
                *("--appendonly", "no", "--dir", workdir, "--requirepass", SECRET),
            ],
            stdout=subprocess.DEVNULL,
        )
        try:
            _wait_for_port(port, proc, "redis-server")
            yield port, f"redis://:{SECRET}@127.0.0.1:{port}/0"
        finally:
            _stop(proc)


def attack(marker: Path, tag: str, redis_port: int, postgres_port: int) -> str:
    return (
        "tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/1/environ; env; "
        "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done; "
        f"touch {marker}; "  # in the sandbox's own /tmp, if anywhere
        f"(exec 3<>/dev/tcp/127.0.0.1/{redis_port}) && echo REACHED-REDIS; "
        f"(exec 3<>/dev/tcp/127.0.0.1/{postgres_port}) && echo REACHED-POSTGRES; "
        f"env -i sleep {tag} > /dev/null 2>&1 & "
        "echo END"
    )


@pytest.mark.parametrize("workers", [1, 2])
def test_a_bash_call_through_neta_serve_takes_nothing_from_the_host(
    tmp_path, guarded_redis, postgres_server, workers
):
    require_sandbox()  # its bash call runs in the default sandbox
    redis_port, redis_url = guarded_redis
    postgres_port = int(postgres_server.rsplit(":", 1)[1])
    user, host = postgres_server.split("//", 1)[1].split("@", 1)
    database = f"postgresql://{user}:{SECRET}@{host}/postgres"  # trust auth ignores it
    marker = Path("/tmp") / f"neta-outside-{secrets.token_hex(4)}"
    tag = f"600.{secrets.randbelow(10**6):06d}"
    command = attack(marker, tag, redis_port, postgres_port)
    replies = [
        Reply(tool_calls=[("bash", json.dumps({"command": command}))]),
        Reply(text="done"),
    ]
    workspace = tmp_path / "ws"
    workspace.mkdir()
    port = free_port()
    with FakeOpenAI(replies) as fake:
        env = neta_environ(
            NETA_HOME=str(tmp_path / "home"),
            NETA_TOKEN=TOKEN,
            OPENAI_API_KEY=f"sk-{SECRET}",
            NETA_REDIS_URL=redis_url,
            NETA_DATABASE_URL=database,
        )
        serve = [sys.executable, "-m", "neta", "serve", "--port", str(port), "-w", str(workspace)]
        serve += ["-p", "openai", "-m", "m", "--base-url", fake.base_url, "--workers", str(workers)]
        serve += ["--mode", "auto"]  # the command runs unasked: what it could take is the test
        log = tmp_path / "serve.log"
        with log.open("w") as out:
            proc = subprocess.Popen(serve, env=env, stdout=out, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_serving(base, proc, log)
            with http_clients.client(timeout=60, headers=bearer(TOKEN)) as http:
                session = http.post(f"{base}/v1/sessions").json()["sessionId"]
                reply = http.post(f"{base}/v1/sessions/{session}/messages", json={"text": "go"})
            assert reply.status_code == 200, reply.text
        finally:
            _stop(proc)
        assert len(fake.requests) == 2, log.read_text()
    [learnt] = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert "END" in learnt  # the command ran
    assert "PATH=" in learnt
    assert SECRET not in learnt
    assert "NETA_" not in learnt
    for sign in ("REACHED-REDIS", "REACHED-POSTGRES"):
        assert sign not in learnt
    assert not marker.exists()
    assert wait_none_running_with(tag) == []
