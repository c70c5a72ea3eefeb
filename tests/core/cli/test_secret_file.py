"""Secrets from files (``--token-file``, ``--api-key-file``), and warnings for ones in ``ps``."""

import socket
import subprocess
import sys

import pytest
import typer

from neta.cli.secret_file import read_secret_file
from tests import http_clients
from tests.core.cli.cli_runner import neta_in_process
from tests.fake_openai import FakeOpenAI, Reply
from tests.services import bearer, free_port, neta_environ, start_neta_serve, wait_until_serving

PS_WARNING = "is visible to other users of this machine (in `ps`)"


def neta(*args):
    return neta_in_process(*args, env=neta_environ())


def secret_file(tmp_path, data, mode=0o600):
    path = tmp_path / "secret"
    path.write_bytes(data.encode())
    path.chmod(mode)
    return path


@pytest.mark.parametrize("data", ["k3y\n", "k3y", "k3y\r\n"])
def test_a_secret_file_gives_its_text_less_one_trailing_newline(tmp_path, data):
    assert read_secret_file(secret_file(tmp_path, data), "--token-file") == "k3y"


@pytest.mark.parametrize(
    ("data", "said"),
    [("", "is empty"), ("\n", "is empty"), ("a\nb\n", "more than one line"), ("k\n\n", "line")],
)
def test_a_secret_file_without_one_line_of_secret_is_refused(tmp_path, data, said):
    with pytest.raises(typer.BadParameter, match=said):
        read_secret_file(secret_file(tmp_path, data), "--token-file")


@pytest.mark.parametrize(
    "command",
    [("run", "hi", "-p", "openai"), ("chat", "-p", "openai"), ("serve", "-p", "openai")],
)
@pytest.mark.parametrize("data", [None, ""])
def test_a_missing_or_empty_api_key_file_is_an_error_with_exit_2(tmp_path, command, data):
    path = tmp_path / "key" if data is None else secret_file(tmp_path, data)
    done = neta(*command, "-w", str(tmp_path), "--api-key-file", str(path))
    assert done.returncode == 2
    assert done.stderr.startswith("Error: Invalid value for '--api-key-file': ")
    assert str(path) in done.stderr
    assert ("No such file" if data is None else "is empty") in done.stderr


@pytest.mark.parametrize(
    ("mode", "warned"),
    [(0o600, False), (0o644, True), (0o640, True)],
    ids=["owner-only", "world-readable", "group-readable"],
)
def test_run_takes_its_api_key_from_a_file_and_warns_when_others_may_read_it(
    tmp_path, mode, warned
):
    key = secret_file(tmp_path, "sk-from-file\n", mode)
    with FakeOpenAI([Reply(text="done")]) as server:
        done = neta(
            "run", "go", "-p", "openai", "--base-url", server.base_url,
            "--api-key-file", str(key), "-w", str(tmp_path),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert server.authorizations == ["Bearer sk-from-file"]
    warning = f"Warning: {key} can be read by other users (mode {mode:04o}); chmod 600 {key}"
    assert (warning in done.stderr.splitlines()) is warned
    assert PS_WARNING not in done.stderr


def test_an_api_key_on_the_command_line_is_warned_about_once(tmp_path):
    with FakeOpenAI([Reply(text="done")]) as server:
        done = neta(
            "run", "go", "-p", "openai", "--base-url", server.base_url, "--api-key", "sk-k",
            "-w", str(tmp_path),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [warning] = [line for line in done.stderr.splitlines() if PS_WARNING in line]
    assert warning.startswith("Warning: --api-key is visible")
    assert warning.endswith("or --api-key-file")


@pytest.mark.parametrize(
    "command", [("run", "hi"), ("serve",), ("mcp", "serve", "--http", "127.0.0.1:1")]
)
def test_a_secret_and_its_file_together_are_a_usage_error(tmp_path, command):
    key = secret_file(tmp_path, "s3cret")
    option = "--token" if command[0] in ("serve", "mcp") else "--api-key"
    done = neta(*command, "-w", str(tmp_path), option, "s3cret", f"{option}-file", str(key))
    assert done.returncode == 2
    assert f"give {option} or {option}-file, not both" in done.stderr.splitlines()[0]


def test_a_token_on_the_command_line_is_warned_about(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        served = neta("serve", "--token", "s3cret", "--port", str(port), "-w", str(tmp_path))
    assert served.returncode == 2  # the port is taken: it stops there, after the warning
    assert served.stderr.startswith(f"Warning: --token {PS_WARNING}; prefer NETA_TOKEN or ")
    mcp = neta("mcp", "serve", "--token", "s3cret", "--http", "nowhere", "-w", str(tmp_path))
    assert mcp.returncode == 2
    assert mcp.stderr.startswith(f"Warning: --token {PS_WARNING}")


def test_serve_requires_the_token_its_file_holds(tmp_path):
    token = secret_file(tmp_path, "token-from-file\n")
    proc, base = start_neta_serve(tmp_path, [{"text": "x"}], "--token-file", str(token), token=None)
    try:
        assert http_clients.get(f"{base}/v1/sessions/nope").status_code == 401
        found = http_clients.get(f"{base}/v1/sessions/nope", headers=bearer("token-from-file"))
        assert found.status_code == 404
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    printed = (tmp_path / "serve.log").read_text()
    assert "token-from-file" not in printed
    assert "Token for" not in printed  # none was made
    assert "Warning" not in printed


def test_mcp_serve_requires_the_token_its_file_holds(tmp_path):
    token = secret_file(tmp_path, "token-from-file\n")
    port = free_port()
    log = tmp_path / "mcp.log"
    with log.open("w") as printed:
        proc = subprocess.Popen(
            [sys.executable, "-m", "neta", "mcp", "serve", "-w", str(tmp_path),
             "--http", f"127.0.0.1:{port}", "--token-file", str(token)],
            env=neta_environ(NETA_HOME=str(tmp_path / "home")),
            stdout=printed, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_until_serving(f"http://127.0.0.1:{port}", proc, log, seconds=60)
        assert http_clients.post(url, json={"jsonrpc": "2.0"}).status_code == 401
        answered = http_clients.post(
            url, json={"jsonrpc": "2.0"}, headers=bearer("token-from-file")
        )
        assert answered.status_code != 401
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    assert "token-from-file" not in log.read_text()
    assert "Token for" not in log.read_text()
