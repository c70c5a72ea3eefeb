"""Commands confined by bubblewrap (``bwrap``): the command line built per call from a policy.

The sandbox a command gets:

- its own PID, IPC and UTS namespaces, a new session (no ``TIOCSTI`` into a terminal) and
  ``--die-with-parent``: the host's processes and their ``/proc`` are invisible, and when the
  command's first process ends, the namespace's init ends and the kernel kills every process
  left in it (``env -i``, ``setsid`` and double forks included);
- the whole file system read-only, ``/proc/sys`` and the kernel's other switches in ``/proc``
  included; what ``_layout`` hides replaced by empty, size-bounded in-memory folders and files
  (the home folder, ``NETA_HOME``, ``/tmp``, ``/run``...), what it shows bound back read-only;
  the workspace bound read-write, then the policy's own paths; a hidden folder inside the
  workspace stays hidden, each folder on the way to it pinned so that it cannot be renamed;
- no network but its own loopback unless the policy allows it;
- no capabilities (a host running as root drops them all) and the system call filter of
  ``_seccomp`` (no set-user-ID files; no Unix sockets without the network);
- ``prlimit`` limits (processes, file size, CPU time, open files) set inside it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from neta.errors import ToolError
from neta.home import neta_home
from neta.sandbox._environment import sandbox_environment
from neta.sandbox._layout import Layout, host_layout, inside
from neta.sandbox._pids import PidsGroup, pids_hierarchy
from neta.sandbox._policy import SandboxPolicy
from neta.sandbox._seccomp import filter_file, filter_supported

BWRAP_VARIABLE = "NETA_BWRAP"
"""Host environment variable: the bubblewrap binary to use (default: ``bwrap`` on ``PATH``)."""

KERNEL_SWITCHES = ("/proc/sys", "/proc/sysrq-trigger")
"""Parts of ``/proc`` through which root, even without capabilities, could change the host
(bwrap itself makes ``/proc/irq`` and ``/proc/bus`` read-only)."""

_FILTER_FD = 9  # where the wrapper shell opens the system call filter for bwrap

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
            ``release`` it once the command ended.
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
    setenv: Mapping[str, str] | None = None,
) -> Confined:
    """``command`` wrapped to run in the sandbox ``policy`` describes, in ``cwd``.

    Args:
        command: the program and its arguments.
        policy: what the sandbox allows (``enabled`` is not looked at: the caller decides).
        workspace: bound read-write at its own path.
        cwd: where the command starts (the workspace by default).
        host_env: the environment the allow list picks from (this process's by default).
        setenv: variables set inside the sandbox only (never for ``bwrap`` itself: a
            ``LD_PRELOAD`` there would run before any confinement).

    Raises:
        ToolError: commands cannot be sandboxed here, or not in ``workspace``.
    """
    binary = bwrap_path()
    _check_neta_home(workspace)
    layout = host_layout()
    argv = [binary, *_namespaces(policy), *_file_system(policy, workspace, layout)]
    for name, value in (setenv or {}).items():
        argv += ["--setenv", name, value]
    argv += ["--chdir", str(cwd or workspace), "--", *_limits(policy), "--", *command]
    env = sandbox_environment(policy, host_env or os.environ, home=_home())
    pids = None
    if os.geteuid() == 0:  # the kernel ignores RLIMIT_NPROC for root: count in a group
        hierarchy = pids_hierarchy()
        pids = PidsGroup.make(hierarchy, policy.limits.processes) if hierarchy else None
    return Confined(_wrapped(argv, policy, pids), env, pids)


def _wrapped(argv: list[str], policy: SandboxPolicy, pids: PidsGroup | None) -> list[str]:
    """``argv`` started by a shell that opens the system call filter and joins the group.

    The shell opens the filter on the descriptor ``--seccomp`` names and moves itself into
    the call's control group before anything of the command runs.
    """
    if not filter_supported():
        return pids.join_argv(argv) if pids is not None else argv
    bwrap, *rest = argv
    argv = [bwrap, "--seccomp", str(_FILTER_FD), *rest]
    procs = str(pids.path / "cgroup.procs") if pids is not None else ""
    script = f'exec {_FILTER_FD}<"$0" && {{ [ -z "$1" ] || echo $$ > "$1"; }} && shift && exec "$@"'
    return ["/bin/sh", "-c", script, filter_file(network=policy.network), procs, *argv]


def _namespaces(policy: SandboxPolicy) -> list[str]:
    flags = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not policy.network:
        flags.append("--unshare-net")
    if os.geteuid() == 0:
        flags += ["--cap-drop", "ALL"]
    else:  # its own user namespace, so the process limit counts only the sandbox's processes
        flags.append("--unshare-user")
    return [*flags, "--die-with-parent", "--new-session", "--hostname", "sandbox"]


def _file_system(policy: SandboxPolicy, workspace: Path, layout: Layout) -> list[str]:
    """The mounts, in order: hidden, shown again, the workspace, the policy's, hidden inside.

    Every writable in-memory folder is bounded (``tmpfs_size`` for ``/tmp`` and the home
    folder, ``small_tmpfs_size`` for the others, a megabyte for ``/dev``); a folder hidden
    only because others may not read it is an empty read-only one.

    Raises:
        ToolError: the workspace is a folder the sandbox must hide (the home folder,
            ``NETA_HOME``), or a policy path is reached through a symlink.
    """
    if workspace in layout.hidden:
        raise ToolError(
            f"commands cannot be sandboxed in {workspace}: it is a folder the sandbox hides "
            f"(your home folder or NETA_HOME); work in a folder below it{_HOW_TO_CHOOSE}"
        )
    args = ["--ro-bind", "/", "/", "--proc", "/proc", *_devices()]
    for switch in KERNEL_SWITCHES:
        args += ["--ro-bind-try", switch, switch]
    # the layout is read once; what is gone since needs no hiding (and bwrap could not make
    # a mount point for it in the read-only system)
    covered: list[Path] = []  # a folder inside one hidden already needs no mount of its own
    for path in [*layout.hidden, *layout.unreadable]:
        if inside(path, workspace) or any(inside(path, c) for c in covered):
            continue
        if os.path.isdir(path):
            args += _empty(path, policy, writable=path in layout.hidden)
            covered.append(path)
    for path in layout.shown:
        if os.path.exists(path):
            args += ["--ro-bind", str(path), str(path)]
    for path in layout.hidden_files:
        if not inside(path, workspace) and os.path.isfile(path):
            args += ["--ro-bind", "/dev/null", str(path)]
    args += ["--bind", str(workspace), str(workspace)]
    for flag, paths in (("--ro-bind-try", policy.read_only), ("--bind-try", policy.read_write)):
        for path in paths:
            args += [flag, _unlinked(path), str(path)]
    for path in layout.hidden:  # NETA_HOME kept in the workspace: pinned, then hidden
        if inside(path, workspace):
            for folder in reversed(path.parents):
                if inside(folder, workspace) and folder != workspace:
                    args += ["--bind", str(folder), str(folder)]
            args += _empty(path, policy, writable=True)
    return args


_ROOMY = ("/tmp",)  # besides the home folder: where programs keep what they make
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")


def _empty(path: Path, policy: SandboxPolicy, *, writable: bool) -> list[str]:
    """An empty in-memory folder over ``path``: bounded, or read-only."""
    limits = policy.limits
    if not writable:
        return ["--size", "4096", "--tmpfs", str(path), "--remount-ro", str(path)]
    roomy = str(path) in _ROOMY or path == Path(_home())
    size = limits.tmpfs_size if roomy else limits.small_tmpfs_size
    return ["--size", str(size), "--tmpfs", str(path)]


def _devices() -> list[str]:
    """A ``/dev`` of the harmless devices only, on a bounded folder.

    (bwrap's own ``--dev`` is a writable in-memory folder that may take half the memory.)
    """
    args = ["--size", str(1024 * 1024), "--tmpfs", "/dev"]
    for name in _DEVICES:
        args += ["--dev-bind-try", f"/dev/{name}", f"/dev/{name}"]
    args += ["--symlink", "/proc/self/fd", "/dev/fd"]
    for number, name in enumerate(("stdin", "stdout", "stderr")):
        args += ["--symlink", f"/proc/self/fd/{number}", f"/dev/{name}"]
    return args


def _unlinked(path: Path) -> str:
    """``path``, refused when a symlink on the way to it would redirect the mount.

    Raises:
        ToolError: it is reached through a symlink.
    """
    if os.path.lexists(path) and os.path.realpath(path) != str(path):
        raise ToolError(
            f"commands cannot be sandboxed: the sandbox path {path} is reached through a "
            f"symlink (to {os.path.realpath(path)}); name the real path"
        )
    return str(path)


def _check_neta_home(workspace: Path) -> None:
    """Make ``NETA_HOME`` exist, so the sandbox hides it; refuse one it cannot keep hidden.

    Raises:
        ToolError: ``NETA_HOME`` lies in the workspace behind a symlink a command could
            point elsewhere.
    """
    home = Path(os.path.abspath(neta_home()))
    real = Path(os.path.realpath(home))
    if (inside(home, workspace) or inside(real, workspace)) and home != real:
        raise ToolError(
            f"commands cannot be sandboxed: NETA_HOME ({home}) lies in the workspace behind a "
            f"symlink a command could change; set NETA_HOME to a real folder outside the "
            f"workspace{_HOW_TO_CHOOSE}"
        )
    with contextlib.suppress(OSError):  # a home it cannot make is one nothing is kept in
        real.mkdir(mode=0o700, parents=True, exist_ok=True)


def _limits(policy: SandboxPolicy) -> list[str]:
    limits = policy.limits
    return [
        _prlimit(),
        f"--nproc={limits.processes}",
        f"--fsize={limits.file_size}",
        f"--cpu={limits.cpu_seconds}",
        f"--nofile={limits.open_files}",
    ]


def _home() -> str:
    """The value of ``HOME`` in the sandbox: the host's home folder's path (empty there)."""
    return str(Path(os.environ.get("HOME") or "/").resolve())


def _prlimit() -> str:
    return shutil.which("prlimit") or "/usr/bin/prlimit"


def _probe(binary: str | None, configured: bool) -> str | None:
    """``_probed``, tried again when a signal ended the probe (a Ctrl-C while it ran)."""
    for _attempt in range(3):
        reason = _probed(binary, configured)
        if reason is None or _INTERRUPTED not in reason:
            return reason
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
