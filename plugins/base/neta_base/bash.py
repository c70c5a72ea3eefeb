"""The ``bash`` tool: run a shell command in the workspace, bounded in time and in output.

A session's commands run in the sandbox its policy describes (``neta.sandbox``: bubblewrap,
no network, the workspace the only place they write, an allow-listed environment); only a
session whose host chose ``--sandbox off`` runs them with the host's authority.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import subprocess
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

import neta
from neta.events import ToolOutput
from neta.sandbox import Confined, SandboxPolicy, confine
from neta_base import environment, processes

MAX_TIMEOUT = 600
"""The longest a command may run, in seconds."""

KEEP_CHARS = 20_000
"""Characters of output kept at each end; the middle of longer output is cut."""

STREAM_CHARS = KEEP_CHARS
"""Characters of output passed on while the command runs (``tool_output`` events): its start,
which the result keeps too."""

_STREAM_EVERY = 0.1  # seconds: what the command writes is passed on at most this often
_TERM_GRACE = 2.0  # seconds between SIGTERM and SIGKILL
_DRAIN_SECONDS = 1.0  # how long to wait for output once the shell itself has exited
_SIGNALLED = 128  # exit status 128 + N: ended by signal N (the shells' and bwrap's convention)


class BashArgs(BaseModel):
    """Arguments of ``bash``."""

    command: str = Field(min_length=1, description="The command line, run with `bash -c`.")
    timeout: int = Field(
        120, ge=1, le=MAX_TIMEOUT, description="Seconds before the command is killed (1-600)."
    )


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``bash`` tool for ``session``: commands run in its workspace root."""

    def stream(text: str) -> None:
        session.emit(ToolOutput(name=SCHEMA.name, text=text))

    async def bash(args: BashArgs) -> neta.ToolResult:
        sandboxed = session.sandbox.enabled
        run = await run_command(
            args.command,
            cwd=session.workspace,
            timeout=args.timeout,
            env=environment.for_session(session),
            sandbox=environment.sandbox_for_session(session) if sandboxed else None,
            session_mark=None if sandboxed else processes.session_mark(session),
            on_output=stream,
        )
        return run.result(args.timeout)

    # Commands may depend on each other's effects, so they never run concurrently; the runtime's
    # own timeout must outlast the longest one this tool allows, kill grace included.
    def preview(args: BashArgs) -> str:
        where = "in the sandbox" if session.sandbox.enabled else "unsandboxed, as you"
        return f"$ {args.command}\n({where}; time limit {args.timeout:g} s)"

    return neta.Tool(
        name=SCHEMA.name,
        execute=bash,
        sequential=True,
        timeout=MAX_TIMEOUT + 30,
        preview=preview,
    )


@dataclass(frozen=True)
class CommandRun:
    """What a finished command left behind.

    Attributes:
        output: standard output and error, interleaved as written, middle cut when long.
        exit_code: the shell's exit status; negative when a signal ended it.
        timed_out: whether it was killed for running too long.
        detached: whether processes it started in the background still held the output open
            when it ended (their later output is not captured).
    """

    output: str
    exit_code: int
    timed_out: bool
    detached: bool

    def result(self, timeout: int) -> neta.ToolResult:
        """The tool result the model reads."""
        notes = []
        if self.timed_out:
            notes.append(
                f"[timed out after {timeout} s: the command and every process it started "
                f"were killed]"
            )
        elif self.exit_code < 0:
            notes.append(f"[killed by signal {_signal_name(-self.exit_code)}]")
        else:
            notes.append(f"[exit code {self.exit_code}]")
        if self.detached:
            notes.append(
                "[background processes still hold the output open; what they print from now "
                "on is not captured: redirect it to a file]"
            )
        body = self.output if self.output else "(no output)"
        separator = "" if body.endswith("\n") else "\n"
        return neta.ToolResult(
            content=body + separator + "\n".join(notes),
            is_error=self.timed_out,
            data={"exit_code": self.exit_code, "timed_out": self.timed_out},
        )


async def run_command(
    command: str,
    *,
    cwd: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    session_mark: str | None = None,
    sandbox: SandboxPolicy | None = None,
    on_output: Callable[[str], None] | None = None,
) -> CommandRun:
    """Run ``bash -c command`` in ``cwd`` in its own process group; kill it all on timeout.

    Standard output and error share one pipe, so they interleave in the order written. The
    command gets no standard input.

    With ``sandbox``, the command runs under bubblewrap in its own PID namespace: when the
    shell ends (or is killed), every process it started dies with the namespace. Without,
    every process it starts carries this call's mark (and ``session_mark``) in its
    environment, so a timeout or a cancellation kills the processes that left the group too
    (``setsid``, ``nohup``, double forks; see ``processes``).

    Args:
        command: the command line.
        cwd: where it runs.
        timeout: seconds before it is killed.
        env: its environment (default: this process's, minus the secrets ``environment``
            keeps from commands); sandboxed, only the names its host allowed
            (``NETA_BASH_ENV_ALLOW``) are taken from it, besides the sandbox's allow list.
        session_mark: the session's mark, for the sweep when the session ends (unsandboxed).
        sandbox: the policy that confines the command; ``None`` runs it unconfined.
        on_output: told what the command writes while it runs: its first ``STREAM_CHARS``
            characters, gathered (at most every 0.1 s), all of it before this returns.

    Raises:
        ToolError: the shell could not be started, or the sandbox is not available here.
    """
    mark = processes.call_mark()
    child_env = dict(env if env is not None else environment.for_host())
    confined: Confined | None = None
    if sandbox is not None:
        confined = confine(
            ["bash", "-c", command],
            policy=sandbox,
            workspace=cwd,
            host_env=child_env,
        )
        argv, child_env = confined.argv, confined.env
    else:
        argv = ["bash", "-c", command]
        child_env[processes.CALL_VARIABLE] = mark
        if session_mark is not None:
            child_env[processes.SESSION_VARIABLE] = session_mark
            processes.note_started(session_mark)
    loop = asyncio.get_running_loop()
    output = _Output(KEEP_CHARS)
    stream = _Stream(on_output, STREAM_CHARS, _STREAM_EVERY) if on_output is not None else None
    closed: asyncio.Future[None] = loop.create_future()
    read_fd, write_fd = os.pipe()
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: _Collector(output, closed, stream), os.fdopen(read_fd, "rb", buffering=0)
        )
    except BaseException:
        os.close(write_fd)
        raise
    try:
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                start_new_session=True,
                env=child_env,
            )
        except OSError as exc:
            raise neta.ToolError(f"cannot start bash in {cwd}: {exc.strerror or exc}") from exc
        finally:
            os.close(write_fd)
        try:
            timed_out = not await _wait(process.wait(), timeout)
            if timed_out:
                await _terminate_group(process, closed)
                if confined is None:  # a sandbox's processes died with its namespace
                    processes.kill_marked(processes.CALL_VARIABLE, mark)
            detached = not await _wait(asyncio.shield(closed), _DRAIN_SECONDS)
        except BaseException:  # cancelled from outside: never leave the command running
            _signal_group(process.pid, signal.SIGKILL)
            if confined is None:
                processes.kill_marked(processes.CALL_VARIABLE, mark)
            await process.wait()  # prompt after SIGKILL; reaps the shell and frees its transport
            raise
    finally:
        transport.close()
        if stream is not None:  # what came last, before the result that follows
            stream.flush()
        if confined is not None and confined.pids is not None:
            confined.pids.release()
    exit_code = process.returncode if process.returncode is not None else -signal.SIGKILL
    if confined is not None and _SIGNALLED < exit_code <= _SIGNALLED + 64:
        exit_code = _SIGNALLED - exit_code  # bwrap says "killed by signal N" as 128 + N
    return CommandRun(output.text(), exit_code, timed_out, detached)


async def _wait(awaitable: Awaitable[object], seconds: float) -> bool:
    """Await ``awaitable`` for at most ``seconds``; whether it finished in time."""
    try:
        await asyncio.wait_for(awaitable, seconds)
    except TimeoutError:
        return False
    return True


async def _terminate_group(
    process: asyncio.subprocess.Process, closed: asyncio.Future[None]
) -> None:
    """SIGTERM the whole process group, give it a grace period, then SIGKILL what is left."""
    _signal_group(process.pid, signal.SIGTERM)
    await _wait(asyncio.gather(process.wait(), asyncio.shield(closed)), _TERM_GRACE)
    _signal_group(process.pid, signal.SIGKILL)
    await process.wait()


def _signal_group(group: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


class _Output:
    """The head and the tail of a stream of bytes decoded as UTF-8, never more in memory."""

    def __init__(self, keep: int) -> None:
        self._keep = keep
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head: list[str] = []
        self._head_size = 0
        self._tail: deque[str] = deque()
        self._tail_size = 0
        self._total = 0

    def feed(self, data: bytes) -> str:
        """Take ``data``; the text it completes (a character may straddle two pieces)."""
        text = self._decoder.decode(data)
        self._add(text)
        return text

    def text(self) -> str:
        self._add(self._decoder.decode(b"", final=True))
        head = "".join(self._head)
        tail = "".join(self._tail)[-self._keep :] if self._tail else ""
        cut = self._total - len(head) - len(tail)
        if not cut:
            return head + tail
        return f"{head}\n\n... [{cut:,} characters of output cut here] ...\n\n{tail}"

    def _add(self, text: str) -> None:
        self._total += len(text)
        room = self._keep - self._head_size
        if room > 0:
            self._head.append(text[:room])
            self._head_size += len(self._head[-1])
            text = text[room:]
        if not text:
            return
        self._tail.append(text)
        self._tail_size += len(text)
        while self._tail_size - len(self._tail[0]) >= self._keep:
            self._tail_size -= len(self._tail.popleft())


class _Stream:
    """Passes on the first ``limit`` characters of the output, gathered for ``every`` s."""

    def __init__(self, on_output: Callable[[str], None], limit: int, every: float) -> None:
        self._on_output = on_output
        self._room = limit
        self._every = every
        self._pending: list[str] = []
        self._timer: asyncio.TimerHandle | None = None

    def add(self, text: str) -> None:
        if self._room <= 0 or not text:
            return
        self._pending.append(text[: self._room])
        self._room -= len(self._pending[-1])
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._every, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending:
            text = "".join(self._pending)
            self._pending.clear()
            self._on_output(text)


class _Collector(asyncio.Protocol):
    """Feeds what the command writes to an ``_Output`` and a ``_Stream``; ends ``closed`` at EOF."""

    def __init__(
        self, output: _Output, closed: asyncio.Future[None], stream: _Stream | None = None
    ) -> None:
        self._output = output
        self._closed = closed
        self._stream = stream

    def data_received(self, data: bytes) -> None:
        text = self._output.feed(data)
        if self._stream is not None:
            self._stream.add(text)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._stream is not None:
            self._stream.flush()
        if not self._closed.done():
            self._closed.set_result(None)


SCHEMA = neta.ToolSchema(
    effect="runs",
    name="bash",
    toolset="base",
    description=(
        "Run a command with bash in the workspace root and return its output (standard output "
        "and error together) and exit code."
    ),
    args=BashArgs,
    guidance=(
        "bash runs `bash -c <command>` in the workspace root with no standard input, so "
        "interactive programs (editors, pagers, prompts) cannot be used: pass flags such as "
        "--yes or --no-pager instead. Each call starts a fresh shell: `cd` and exported "
        "variables do not carry over, so chain dependent steps with &&. The command is killed, "
        "with every process it started, after `timeout` seconds (default 120, at most 600). "
        "Output is kept from the start and the end (20,000 characters each) with the middle "
        "cut, so filter long output (grep, head, tail, --quiet). Start long-lived background "
        "processes with their output redirected to a file. Prefer read_file, list_dir, "
        "write_file and patch over cat, ls, echo > and sed for files."
    ),
    when_to_use="To run commands, tests, builds or git, use bash.",
)
