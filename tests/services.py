"""Real Redis and PostgreSQL servers for tests, started on free 127.0.0.1 ports in temp dirs.

A test needing one asks for the ``redis_url`` or ``postgres_url`` fixture. Without the server's
binary the test is skipped with the reason; with ``NETA_REQUIRE_SERVICES=1`` (CI sets it) a
missing binary fails the test instead. PostgreSQL refuses to run as root, so as root the
cluster belongs to, and runs as, the unprivileged user ``nobody``.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def require(binary: str | None, what: str) -> str:
    """``binary``'s path; skip (or fail under ``NETA_REQUIRE_SERVICES=1``) when it is missing."""
    if binary is not None:
        return binary
    reason = f"{what} is not installed (apt-get install {what.split()[0]})"
    if os.environ.get("NETA_REQUIRE_SERVICES") == "1":
        pytest.fail(f"NETA_REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(reason)


def require_sandbox() -> None:
    """Skip (or fail under ``NETA_REQUIRE_SERVICES=1``) unless commands can be sandboxed here.

    A test whose agent runs ``bash`` in the default sandbox needs bubblewrap and user
    namespaces; without them every command is refused, as a user would see.
    """
    from neta.sandbox import sandbox_unavailable

    reason = sandbox_unavailable()
    if reason is None:
        return
    if os.environ.get("NETA_REQUIRE_SERVICES") == "1":
        pytest.fail(f"NETA_REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(reason)


@contextlib.contextmanager
def listening_port() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that accepts connections (nobody answers) while the block runs."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_serving(
    base: str, proc: subprocess.Popen[Any], log: Path | None = None, seconds: float = 30
) -> None:
    """Wait until the HTTP server ``proc`` started at ``base`` answers, whatever the status.

    Fails with the process's ``log`` if it exits first or does not answer within ``seconds``.
    The probe asks for a path no route has: a 404 (or a 401 from a server wanting a token)
    costs the server next to nothing, where ``/openapi.json`` made it build its whole schema.
    """
    import httpx  # here, not at the top: the controller loads this module and runs no test

    from tests import http_clients  # (it imports neta)

    def printed() -> str:
        return log.read_text(errors="replace") if log is not None and log.exists() else ""

    deadline = time.monotonic() + seconds
    with http_clients.client(timeout=1) as http:  # one client for all the polls
        while True:
            try:
                http.get(f"{base}/not-a-route")
                return
            except httpx.TransportError:
                if proc.poll() is not None:
                    raise AssertionError(
                        f"the server exited with {proc.returncode} before it served:\n{printed()}"
                    ) from None
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"the server did not answer within {seconds:g} s:\n{printed()}"
                    ) from None
                time.sleep(0.05)


def neta_environ(**extra: str) -> dict[str, str]:
    """This process's environment for a ``neta`` the test runs, plus ``extra``: without the
    ``NETA_``, ``OPENAI_`` and ``ANTHROPIC_`` settings that would change what it does,
    ``NETA_HOME`` (each test's own) aside."""
    kept = {
        k: v
        for k, v in os.environ.items()
        if k == "NETA_HOME" or not k.startswith(("NETA_", "OPENAI_", "ANTHROPIC_"))
    }
    return {**kept, **extra}


SERVE_TOKEN = "neta-test-token"
"""The token a ``neta serve`` of ``spawn_neta_serve`` requires unless told otherwise."""


def bearer(token: str = SERVE_TOKEN) -> dict[str, str]:
    """The ``Authorization`` header presenting ``token``."""
    return {"Authorization": f"Bearer {token}"}


def spawn_neta_serve(
    root: Path,
    turns: list[Any],
    *options: str,
    name: str = "serve",
    environ: dict[str, str] | None = None,
    token: str | None = SERVE_TOKEN,
    group: int | None = None,
) -> tuple[subprocess.Popen[bytes], str, Path]:
    """Start a ``neta serve`` process replaying ``turns`` on a free port; the process, its URL
    and its log. ``start_neta_serve`` also waits until it serves.

    Its workspace is ``root``, its ``NETA_HOME`` ``root/home``, its script ``root/NAME.json``
    and its log ``root/NAME.log``; ``options`` follow on its command line, after
    ``--token TOKEN`` (none with ``token=None``: the server makes one and prints it). Its
    environment is this process's as ``neta_environ`` gives it, plus ``environ``; with
    ``group``, it runs in that group.
    """
    script = root / f"{name}.json"
    script.write_text(json.dumps({"turns": turns}))
    port = free_port()
    env = neta_environ(NETA_HOME=str(root / "home"), **(environ or {}))
    command = [sys.executable, "-m", "neta", "serve", "--port", str(port), "-p", "scripted"]
    command += ["--script", str(script), "-w", str(root)]
    command += [*(["--token", token] if token is not None else []), *options]
    log_path = root / f"{name}.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, group=group)
    return proc, f"http://127.0.0.1:{port}", log_path


def start_neta_serve(
    root: Path,
    turns: list[Any],
    *options: str,
    environ: dict[str, str] | None = None,
    token: str | None = SERVE_TOKEN,
    group: int | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    """``spawn_neta_serve``, once the process serves: the process and its URL. It is killed
    when it does not start as it should."""
    proc, base, log_path = spawn_neta_serve(
        root, turns, *options, environ=environ, token=token, group=group
    )
    try:
        wait_until_serving(base, proc, log_path)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc, base


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def start_redis(port: int, workdir: str) -> subprocess.Popen[bytes]:
    """A Redis server (no persistence) on 127.0.0.1:``port``, once it listens; the caller
    stops it. Started again on the same port, it is the same server, emptied by a restart."""
    binary = require(shutil.which("redis-server"), "redis-server")
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    command += ["--appendonly", "no", "--dir", workdir]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    try:
        _wait_for_port(port, proc, "redis-server")
    except BaseException:
        _stop(proc)
        raise
    return proc


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server a test started (SIGTERM; SIGKILL if it lingers)."""
    _stop(proc)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[str]:
    """A Redis server for the test session (no persistence); yields its base URL."""
    port = free_port()
    with tempfile.TemporaryDirectory() as workdir:
        proc = start_redis(port, workdir)
        try:
            yield f"redis://127.0.0.1:{port}"
        finally:
            _stop(proc)


@pytest.fixture
def redis_url(redis_server: str) -> str:
    """The Redis server's URL, emptied for this test."""
    import redis

    client = redis.Redis.from_url(redis_server)
    try:
        client.flushall()
    finally:
        client.close()
    return f"{redis_server}/0"


def _postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    if found:
        return Path(found[-1]).parent
    postgres = shutil.which("postgres")
    return Path(postgres).parent if postgres else None


class PostgresCluster:
    """A PostgreSQL cluster in a temp dir (fsync off) on a free 127.0.0.1 port, made by
    ``initdb`` and started; the caller stops it with ``stop`` and removes it with ``remove``.

    As root, it belongs to and runs as ``nobody`` (PostgreSQL refuses root).
    """

    def __init__(self) -> None:
        bindir = _postgres_bin()
        require(None if bindir is None else str(bindir), "postgresql server")
        assert bindir is not None
        self.bindir = bindir
        self.as_user: list[str] = []
        self.workdir = Path(tempfile.mkdtemp(prefix="neta-pg-"))
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.workdir, nobody.pw_uid, nobody.pw_gid)
            self.as_user = ["runuser", "-u", "nobody", "--"]
        self.data = self.workdir / "data"
        self.port = free_port()
        self.url = f"postgresql://neta@127.0.0.1:{self.port}"
        """The server's URL (``new_database`` makes a database on it)."""
        self.proc: subprocess.Popen[bytes] | None = None
        try:
            initdb = [str(bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "neta"]
            subprocess.run(
                [*self.as_user, *initdb, "--no-sync", "-E", "UTF8"],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            self.start()
        except BaseException:
            self.remove()
            raise

    def start(self) -> None:
        """Start the server (again, after ``stop``: same port, same data) until it listens."""
        settings = [
            "listen_addresses=127.0.0.1",
            f"unix_socket_directories={self.workdir}",
            "fsync=off",
            "synchronous_commit=off",
            "full_page_writes=off",
            "max_connections=200",
        ]
        command = [*self.as_user, str(self.bindir / "postgres"), "-D", str(self.data)]
        command += ["-p", str(self.port), *(arg for s in settings for arg in ("-c", s))]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_for_port(self.port, self.proc, "postgres")

    def stop(self) -> None:
        """Stop the server at once (fast shutdown: its clients' connections are cut)."""
        if self.proc is not None:
            _stop_postgres(self.data, self.proc)
            self.proc = None

    def remove(self) -> None:
        """Stop the server and delete its files."""
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL cluster for the test session (fsync off); yields its server URL."""
    cluster = PostgresCluster()
    try:
        yield cluster.url
    finally:
        cluster.remove()


def _stop_postgres(data: Path, proc: subprocess.Popen[bytes]) -> None:
    """Stop the cluster at once: a plain terminate asks it to wait for every client to leave.

    SIGINT is PostgreSQL's fast shutdown (clients are disconnected); it goes to the server
    itself (its pid is the first line of ``postmaster.pid``), not to ``runuser`` above it.
    """
    with contextlib.suppress(OSError, ValueError):
        pid = int((data / "postmaster.pid").read_text().split("\n", 1)[0])
        os.kill(pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
    _stop(proc)


def new_database(server: str) -> str:
    """The URL of a fresh, empty database of the PostgreSQL server at ``server``."""
    import psycopg

    name = f"t_{secrets.token_hex(6)}"
    deadline = time.monotonic() + 10
    while True:
        try:
            with psycopg.connect(f"{server}/postgres", autocommit=True) as db:
                db.execute(f"CREATE DATABASE {name}".encode())
            return f"{server}/{name}"
        except psycopg.OperationalError:  # still starting up
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A URL of a fresh, empty database of the test session's PostgreSQL server."""
    return new_database(postgres_server)
