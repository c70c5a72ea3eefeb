"""Start-up cost of the ``neta`` command: CPU seconds until each command has done its first job.

Run: python bench/startup_bench.py [--runs N] [--only NAME ...]

Each command runs as a real process (``python -m neta ...``, as the tests start it) in a fresh
temporary ``NETA_HOME`` and workspace, with the scripted provider wherever a model is needed:

- ``version``: ``neta --version``;
- ``tools-list``: ``neta tools list``;
- ``run``: ``neta run --script s.json "hi"``, one text turn;
- ``chat``: ``neta chat --script s.json`` on a pseudo-terminal, until its prompt shows, then Ctrl-D;
- ``serve-scripted``: ``neta serve -p scripted --script s.json`` until it answers HTTP, then Ctrl-C;
- ``serve-openai``: ``neta serve -p openai`` (a base URL nothing listens on), the same way;
- ``mcp-serve``: ``neta mcp serve`` (stdio) until it answers ``initialize``, then end of input;
- ``no-key-openai``, ``no-key-anthropic``: ``neta run -p openai|anthropic "hi"`` with no key or
  base URL, until it exits 2 saying so (before it imports the provider's SDK).

The figure is the child's own CPU time (user + system, from ``wait4``), the median of ``--runs``
starts after one warm-up start (which also writes the bytecode caches); beside it the spread
(lowest-highest) and how many modules the process imported (one more start, counted with
``-X importtime``). On a shared machine compare the medians of a few invocations.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import pty
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loopback import free_port

READY_TIMEOUT = 60.0


@dataclass
class Place:
    """Where a command runs: its workspace, ``NETA_HOME`` and scripted-provider script."""

    workspace: Path
    home: Path
    script: Path

    def env(self, *, count_imports: bool) -> dict[str, str]:
        """The child's environment: no inherited Neta or provider settings, caches written."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("NETA_", "OPENAI_", "ANTHROPIC_"))
            and k != "PYTHONDONTWRITEBYTECODE"
        }
        env["NETA_HOME"] = str(self.home)
        env["PROMPT_TOOLKIT_NO_CPR"] = "1"
        env["TERM"] = "xterm"
        if count_imports:
            env["PYTHONPROFILEIMPORTTIME"] = "1"
        return env


@dataclass
class Started:
    """One finished start: its CPU seconds and what it wrote on standard error."""

    cpu: float
    stderr: str


def _neta(*args: str) -> list[str]:
    return [sys.executable, "-m", "neta", *args]


def _reap(pid: int) -> tuple[int, float]:
    """Wait for ``pid``; its exit code and user + system CPU seconds."""
    _, status, usage = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime


class _Child:
    """A ``neta`` process whose standard error goes to a file (a pipe could fill and block)."""

    def __init__(self, argv: list[str], place: Place, count_imports: bool, **kwargs: Any) -> None:
        self.log = place.workspace.parent / "stderr.txt"
        with self.log.open("wb") as err:
            self.proc = subprocess.Popen(
                [a.replace("{script}", str(place.script)) for a in argv],
                cwd=place.workspace,
                env=place.env(count_imports=count_imports),
                stderr=err,
                **kwargs,
            )

    def finish(self, *, expect: tuple[int, ...] = (0,)) -> Started:
        """Reap the process; fail unless it exited with one of ``expect``."""
        code, cpu = _reap(self.proc.pid)
        self.proc.returncode = code  # reaped above: keep Popen from waiting again
        stderr = self.log.read_text(errors="replace")
        if code not in expect:
            raise RuntimeError(f"{self.proc.args!r} exited {code}: {stderr[-2000:]}")
        return Started(cpu, stderr)


def _one_shot(*args: str, expect: int = 0) -> Callable[[Place, bool], Started]:
    def start(place: Place, count_imports: bool) -> Started:
        child = _Child(
            _neta(*args), place, count_imports, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL
        )
        return child.finish(expect=(expect,))

    return start


def _serve(*args: str) -> Callable[[Place, bool], Started]:
    def start(place: Place, count_imports: bool) -> Started:
        port = free_port()
        argv = _neta("serve", "--port", str(port), "-w", str(place.workspace), *args)
        child = _Child(
            argv, place, count_imports, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL
        )
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            try:
                connection.request("GET", "/startup-bench-probe")
                connection.getresponse().read()
                break
            except OSError:
                if child.proc.poll() is not None or time.monotonic() > deadline:
                    child.proc.kill()
                    raise RuntimeError(f"serve never answered: {child.log.read_text()}") from None
                time.sleep(0.02)
            finally:
                connection.close()
        child.proc.send_signal(signal.SIGINT)  # Ctrl-C
        return child.finish(expect=(0, 130))

    return start


def _mcp_serve(place: Place, count_imports: bool) -> Started:
    child = _Child(
        _neta("mcp", "serve", "-w", str(place.workspace)),
        place,
        count_imports,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    proc = child.proc
    assert proc.stdin is not None
    assert proc.stdout is not None
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "startup-bench", "version": "1"},
        },
    }
    proc.stdin.write(json.dumps(initialize).encode() + b"\n")
    proc.stdin.flush()
    answer = proc.stdout.readline()
    if b'"id":1' not in answer.replace(b" ", b""):
        raise RuntimeError(f"mcp serve did not answer initialize: {answer!r}")
    proc.stdin.close()
    proc.stdout.read()
    return child.finish()


def _chat(place: Place, count_imports: bool) -> Started:
    argv = _neta("chat", "--script", str(place.script), "-w", str(place.workspace))
    env = place.env(count_imports=count_imports)
    pid, fd = pty.fork()
    if pid == 0:  # the child: neta chat on the pseudo-terminal
        os.chdir(place.workspace)
        os.execve(sys.executable, argv, env)
    seen = b""
    deadline = time.monotonic() + READY_TIMEOUT
    with contextlib.suppress(OSError):  # the terminal closes when the child ends
        while b"you>" not in seen:
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                raise RuntimeError(f"chat never prompted: {seen.decode(errors='replace')}")
            if select.select([fd], [], [], 1.0)[0]:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                seen += chunk
        os.write(fd, b"\x04")  # Ctrl-D at the empty prompt: leave
        while chunk := os.read(fd, 65536):  # drain, so the child never blocks on output
            seen += chunk
    code, cpu = _reap(pid)
    os.close(fd)
    if code != 0:
        raise RuntimeError(f"chat exited {code}: {seen.decode(errors='replace')[-2000:]}")
    return Started(cpu, seen.decode(errors="replace"))


COMMANDS: dict[str, Callable[[Place, bool], Started]] = {
    "version": _one_shot("--version"),
    "tools-list": _one_shot("tools", "list"),
    "run": _one_shot("run", "--script", "{script}", "hi"),
    "chat": _chat,
    "serve-scripted": _serve("-p", "scripted", "--script", "{script}"),
    "serve-openai": _serve("-p", "openai", "-m", "x", "--base-url", "http://127.0.0.1:9/v1"),
    "mcp-serve": _mcp_serve,
    "no-key-openai": _one_shot("run", "-p", "openai", "hi", expect=2),
    "no-key-anthropic": _one_shot("run", "-p", "anthropic", "hi", expect=2),
}


def _count_imports(stderr: str) -> int:
    return sum(1 for line in stderr.splitlines() if line.startswith("import time:"))


def measure(name: str, runs: int, root: Path) -> tuple[list[float], int]:
    """CPU seconds of ``runs`` starts of command ``name`` (after a warm-up) and its imports."""
    start = COMMANDS[name]
    cpus: list[float] = []
    imports = 0
    for attempt in range(runs + 2):  # warm-up, the runs, one counting imports
        place = _place(root / f"{name}-{attempt}")
        started = start(place, attempt == runs + 1)
        if attempt == runs + 1:
            imports = _count_imports(started.stderr) - 1  # less the header line
        elif attempt > 0:
            cpus.append(started.cpu)
    return cpus, imports


def _place(root: Path) -> Place:
    workspace, home = root / "ws", root / "home"
    workspace.mkdir(parents=True)
    home.mkdir()
    script = root / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "hello"}]}))
    return Place(workspace, home, script)


def main() -> None:
    """Print one line per command: median CPU seconds, spread, module count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="measured starts per command")
    parser.add_argument("--only", nargs="*", choices=sorted(COMMANDS), help="commands to time")
    options = parser.parse_args()
    names = options.only or list(COMMANDS)
    print(f"{'command':<16} {'CPU s (median)':>14} {'spread':>13} {'imports':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            cpus, imports = measure(name, options.runs, Path(tmp))
            spread = f"{min(cpus):.2f}-{max(cpus):.2f}"
            print(f"{name:<16} {statistics.median(cpus):>14.2f} {spread:>13} {imports:>8}")


if __name__ == "__main__":
    main()
