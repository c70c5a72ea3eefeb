"""The system calls a sandboxed process may not make, as a classic BPF program for ``bwrap``.

Namespaces leave two holes that only a system call filter closes:

- a file made set-user-ID or set-group-ID in the workspace stays so on the host, where any
  local user may run it with the sandbox's user (root, on a host that runs as root): every
  call that sets a file's mode (``chmod``, ``fchmod``, ``fchmodat``, ``fchmodat2``) or creates
  one with a mode (``open``, ``openat``, ``creat``, ``mknod``, ``mknodat``) is refused when
  that mode has ``S_ISUID`` or ``S_ISGID``; ``openat2`` (its mode lies behind a pointer) and
  ``io_uring_setup`` (its operations bypass the filter) are refused outright;
- without the network a process may still connect to a Unix socket it can see in the file
  system (a database's, Docker's, a server's in the workspace): ``socket(AF_UNIX, ...)`` is
  refused unless the policy lets the network through, and sockets of every family but
  ``AF_INET``, ``AF_INET6`` and ``AF_NETLINK`` always (``AF_VSOCK`` reaches past network
  namespaces). ``socketpair`` stays allowed;
- the kernel's key rings belong to the user, not to a namespace: ``add_key``,
  ``request_key`` and ``keyctl`` are refused.

Only this machine's native system call table is allowed; 32-bit and x32 calls are refused.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import os
import platform
import struct
import tempfile

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_ERRNO = 0x00050000  # SECCOMP_RET_ERRNO | errno
_NR, _ARCH, _ARGS = 0, 4, 16  # offsets in struct seccomp_data (arguments: 8 bytes each)
_SPECIAL_MODES = 0o6000  # S_ISUID | S_ISGID
_AF_UNIX = 1
_INTERNET_FAMILIES = (2, 10, 16)  # AF_INET, AF_INET6, AF_NETLINK
_X32_BIT = 0x40000000

# the native table of each machine: audit architecture, calls whose argument N is a mode,
# calls refused outright, and socket's number
_TABLES: dict[str, tuple[int, dict[int, int], tuple[int, ...], int]] = {
    "x86_64": (
        0xC000003E,
        {2: 2, 85: 1, 90: 1, 91: 1, 133: 1, 257: 3, 259: 2, 268: 2, 452: 2},
        (425, 437, 248, 249, 250),  # io_uring_setup, openat2, add_key, request_key, keyctl
        41,
    ),
    "aarch64": (
        0xC00000B7,
        {56: 3, 33: 2, 52: 1, 53: 2, 452: 2},
        (425, 437, 217, 218, 219),
        198,
    ),
}


def filter_supported() -> bool:
    """Whether this machine's system call table is known here."""
    return platform.machine() in _TABLES


def filter_program(*, network: bool) -> bytes:
    """The filter, as the ``struct sock_filter`` array ``bwrap --seccomp FD`` reads.

    ``network``: whether Unix sockets may be made.

    Raises:
        RuntimeError: this machine's system call table is not known here.
    """
    if not filter_supported():
        raise RuntimeError(f"no system call table for {platform.machine()}")
    arch, mode_argument, refused, socket_call = _TABLES[platform.machine()]
    program: list[tuple[int, int, int, int]] = []

    def op(code: int, k: int, jt: int = 0, jf: int = 0) -> None:
        program.append((code, jt, jf, k))

    checks: list[tuple[int, int]] = list(mode_argument.items())
    op(_LD_W_ABS, _ARCH)
    op(_JEQ_K, arch, jt=1)
    op(_RET_K, _ERRNO | errno.ENOSYS)  # another architecture's calls
    op(_LD_W_ABS, _NR)
    op(_JGE_K, _X32_BIT, jf=1)
    op(_RET_K, _ERRNO | errno.ENOSYS)  # x32 calls
    for nr in refused:
        op(_JEQ_K, nr, jf=1)
        op(_RET_K, _ERRNO | errno.ENOSYS)
    families = (*_INTERNET_FAMILIES, _AF_UNIX) if network else _INTERNET_FAMILIES
    # socket(): allowed for the families above only (a block of its own right here)
    op(_JEQ_K, socket_call, jf=len(families) + 3)
    op(_LD_W_ABS, _ARGS)
    for index, family in enumerate(families):
        op(_JEQ_K, family, jt=len(families) - index)
    op(_RET_K, _ERRNO | errno.EACCES)
    op(_RET_K, _ALLOW)
    # a jump per mode-setting call to its block of four at the end; any other call is allowed
    blocks = len(program) + len(checks) + 1
    for index, (nr, _argument) in enumerate(checks):
        op(_JEQ_K, nr, jt=blocks + 4 * index - len(program) - 1)
    op(_RET_K, _ALLOW)
    for _nr, argument in checks:
        op(_LD_W_ABS, _ARGS + 8 * argument)  # the low 32 bits (little-endian machines)
        op(_JSET_K, _SPECIAL_MODES, jf=1)
        op(_RET_K, _ERRNO | errno.EPERM)
        op(_RET_K, _ALLOW)
    return b"".join(struct.pack("<HBBI", *instruction) for instruction in program)


@functools.cache
def filter_file(*, network: bool) -> str:
    """A private file holding ``filter_program(network=...)``, written once per process."""
    handle, path = tempfile.mkstemp(prefix="neta-seccomp-", suffix=".bpf")
    with os.fdopen(handle, "wb") as file:
        file.write(filter_program(network=network))
    atexit.register(_remove, path)
    return path


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)
