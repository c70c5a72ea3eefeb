"""Commands confined by bubblewrap (``bwrap``): the command line built per call from a policy.

The sandbox a command gets:

- its own PID, IPC and UTS namespaces, a new session (no ``TIOCSTI`` into a terminal) and
  ``--die-with-parent``: the host's processes and their ``/proc`` are invisible, and when the
  command's first process ends, the namespace's init ends and the kernel kills every process
  left in it (``env -i``, ``setsid`` and double forks included);
- the whole file system read-only; the home folder, ``NETA_HOME``, ``/tmp``, ``/var/tmp`` and
  ``/run`` replaced by empty in-memory folders (credentials, the host's sockets and databases
  hidden); the tools the host runs with shown again read-only (``TOOLCHAIN_ROOTS`` and the
  ``PATH`` folders that lie in a hidden folder, and the Python running Neta); the workspace
  bound back read-write, then the policy's own paths;
- no network but its own loopback unless the policy allows it;
- no capabilities (a host running as root drops them all);
- ``prlimit`` limits (processes, file size, CPU time, open files) set inside it.
"""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from neta.errors import ToolError
from neta.home import neta_home
from neta.sandbox._environment import sandbox_environment
from neta.sandbox._pids import PidsGroup, pids_hierarchy
from neta.sandbox._policy import SandboxPolicy

BWRAP_VARIABLE = "NETA_BWRAP"
"""Host environment variable: the bubblewrap binary to use (default: ``bwrap`` on ``PATH``)."""

HIDDEN_SYSTEM = ("/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm")
"""Folders replaced by empty ones in every sandbox (besides the home folder and NETA_HOME)."""

TOOLCHAIN_ROOTS = (
    ".pyenv",
    ".cargo",
    ".rustup",
    ".nvm",
    ".volta",
    ".bun",
    ".deno",
    ".sdkman",
    ".local/bin",
    ".local/share/uv/python",
    "go",
)
"""Folders of the home folder shown read-only when a ``PATH`` entry lies in them: toolchains
whose programs (a venv's ``python`` links into ``~/.pyenv``) would otherwise vanish."""

_HOW_TO_CHOOSE = (
    "; or choose --sandbox off (Agent(sandbox='off'), host setting sandbox: off) to run "
    "commands with your full authority"
)


@dataclass(frozen=True)
class Confined:
    """A command ready to start confined.

    Attributes:
        argv: the command line to execute (``bwrap ... -- prlimit ... -- command``).
        env: the environment to start it with.
        pids: the call's ``pids`` control group, where one enforces the process limit;
            remove it (``try_remove``) once the command ended.
    """

    argv: list[str]
    env: dict[str, str]
    pids: PidsGroup | None = None


def sandbox_unavailable() -> str | None:
    """Why commands cannot be sandboxed on this host, in one line, or ``None`` when they can."""
    configured = os.environ.get(BWRAP_VARIABLE)
    binary = configured or shutil.which("bwrap")
    return _probe(binary, bool(configured))


def bwrap_path() -> str:
    """The bubblewrap binary that confines commands.

    Raises:
        ToolError: commands cannot be sandboxed here (the line says what to install).
    """
    reason = sandbox_unavailable()
    if reason is not None:
        raise ToolError(reason)
    return os.environ.get(BWRAP_VARIABLE) or shutil.which("bwrap") or "bwrap"


def confine(
    command: Sequence[str],
    *,
    policy: SandboxPolicy,
    workspace: Path,
    cwd: Path | None = None,
    host_env: Mapping[str, str] | None = None,
    also_pass: Iterable[str] = (),
    count_processes: bool = True,
) -> Confined:
    """``command`` wrapped to run in the sandbox ``policy`` describes, in ``cwd``.

    Args:
        command: the program and its arguments.
        policy: what the sandbox allows (``enabled`` is not looked at: the caller decides).
        workspace: bound read-write at its own path.
        cwd: where the command starts (the workspace by default).
        host_env: the environment the allow list picks from (this process's by default).
        also_pass: more host variable names or patterns to pass on.
        count_processes: as root, make a ``pids`` control group for the call (a long-lived
            server whose end is not awaited here passes ``False``; ``prlimit`` still applies).

    Raises:
        ToolError: commands cannot be sandboxed here.
    """
    binary = bwrap_path()
    home = _home()
    argv = [binary, *_namespaces(policy), *_file_system(policy, workspace, home)]
    argv += ["--chdir", str(cwd or workspace), "--", *_limits(policy), "--", *command]
    env = sandbox_environment(policy, host_env or os.environ, home=str(home), also_pass=also_pass)
    pids = None
    if count_processes and os.geteuid() == 0:
        hierarchy = pids_hierarchy()
        pids = PidsGroup.make(hierarchy, policy.limits.processes) if hierarchy else None
    if pids is not None:
        argv = pids.join_argv(argv)
    return Confined(argv, env, pids)


def _namespaces(policy: SandboxPolicy) -> list[str]:
    flags = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not policy.network:
        flags.append("--unshare-net")
    if os.geteuid() == 0:
        flags += ["--cap-drop", "ALL"]
    else:  # its own user namespace, so the process limit counts only the sandbox's processes
        flags.append("--unshare-user")
    return [*flags, "--die-with-parent", "--new-session", "--hostname", "sandbox"]


def _file_system(policy: SandboxPolicy, workspace: Path, home: Path) -> list[str]:
    hidden = _hidden(home)
    outside = [path for path in hidden if not _inside(path, workspace)]
    args = ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    for path in sorted(outside, key=lambda p: len(p.parts)):
        args += ["--tmpfs", str(path)]
    for path in _tools_shown(hidden, home):
        args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", str(workspace), str(workspace)]
    for path in policy.read_only:
        args += ["--ro-bind-try", str(path), str(path)]
    for path in policy.read_write:
        args += ["--bind-try", str(path), str(path)]
    for path in hidden:
        if _inside(path, workspace) and path != workspace:
            args += ["--tmpfs", str(path)]  # NETA_HOME kept inside the workspace stays hidden
    return args


def _limits(policy: SandboxPolicy) -> list[str]:
    limits = policy.limits
    return [
        _prlimit(),
        f"--nproc={limits.processes}",
        f"--fsize={limits.file_size}",
        f"--cpu={limits.cpu_seconds}",
        f"--nofile={limits.open_files}",
    ]


def _hidden(home: Path) -> list[Path]:
    """Existing folders to replace by empty ones, by their real paths, without duplicates.

    The home folder both as ``HOME`` says and as the password database says (a host may have
    changed ``HOME``), ``NETA_HOME`` and ``HIDDEN_SYSTEM``.
    """
    found: list[Path] = []
    account_home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    for candidate in (home, account_home, neta_home(), *map(Path, HIDDEN_SYSTEM)):
        if candidate.is_symlink() or not candidate.is_dir():
            continue  # /var/run -> /run is hidden through its target
        real = candidate.resolve()
        if real != Path("/") and real not in found:
            found.append(real)
    return found


def _tools_shown(hidden: list[Path], home: Path) -> list[Path]:
    """Folders of programs the host runs with that a hidden folder covers, to show read-only.

    ``PATH`` entries and the running Python's prefixes that lie in a hidden folder (a venv
    under ``/tmp``, ``~/.cargo/bin``): a toolchain root of the home folder whole, anything
    else as it is. Never a hidden folder itself, nor one holding ``NETA_HOME``.
    """
    secret = neta_home().resolve()
    candidates = [*os.environ.get("PATH", "").split(os.pathsep), sys.prefix, sys.base_prefix]
    shown: list[Path] = []
    for entry in candidates:
        if not entry or not os.path.isabs(entry):
            continue
        path = Path(entry).resolve()
        if not path.is_dir() or not any(_inside(path, root) for root in hidden):
            continue
        path = _toolchain_root(path, home) or path
        if path in hidden or _inside(secret, path) or path in shown:
            continue
        shown.append(path)
    return shown


def _toolchain_root(path: Path, home: Path) -> Path | None:
    for root in TOOLCHAIN_ROOTS:
        if _inside(path, home / root):
            return home / root
    return None


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _home() -> Path:
    """The user's home folder: ``HOME``, else the password database's."""
    home = os.environ.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir
    return Path(home).resolve()


def _prlimit() -> str:
    return shutil.which("prlimit") or "/usr/bin/prlimit"


def _probe(binary: str | None, configured: bool) -> str | None:
    """``_probed``, not remembering a probe a signal ended (a Ctrl-C while it ran)."""
    reason = _probed(binary, configured)
    if reason is not None and _INTERRUPTED in reason:
        _probed.cache_clear()
    return reason


_INTERRUPTED = "bwrap was interrupted"


@functools.cache
def _probed(binary: str | None, configured: bool) -> str | None:
    if binary is None or not (configured or shutil.which(binary)):
        return (
            "commands cannot be sandboxed: bubblewrap is not installed; install it (Debian/Ubuntu: "
            f"apt-get install bubblewrap; Fedora: dnf install bubblewrap){_HOW_TO_CHOOSE}"
        )
    if not Path(binary).is_file():
        return (
            f"commands cannot be sandboxed: {BWRAP_VARIABLE}={binary} is not a file{_HOW_TO_CHOOSE}"
        )
    if not Path(_prlimit()).is_file():
        return f"commands cannot be sandboxed: prlimit (util-linux) is missing{_HOW_TO_CHOOSE}"
    probe = [binary, *_namespaces(SandboxPolicy()), "--ro-bind", "/", "/", "--proc", "/proc"]
    try:
        done = subprocess.run(
            [*probe, "--dev", "/dev", "--", "/bin/true"],
            capture_output=True,
            timeout=10,
            start_new_session=True,  # a Ctrl-C at the terminal is the run's, not the probe's
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"commands cannot be sandboxed: bwrap did not start ({exc}){_HOW_TO_CHOOSE}"
    if done.returncode < 0:
        return f"commands cannot be sandboxed: {_INTERRUPTED} (signal {-done.returncode})"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        detail = said[-1] if said else f"exit code {done.returncode}"
        return (
            f"commands cannot be sandboxed: bwrap failed ({detail}); user namespaces may be "
            f"off (sysctl kernel.unprivileged_userns_clone=1){_HOW_TO_CHOOSE}"
        )
    return None
