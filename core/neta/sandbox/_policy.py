"""What a sandboxed command may see and do: ``SandboxPolicy`` and its ``SandboxLimits``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neta.errors import ConfigError

MODES = ("on", "off")
"""The values ``--sandbox`` and host settings take."""

_FORBIDDEN_NAMES = re.compile(
    r"^NETA_|API_?KEY|_KEY$|^KEY$|TOKEN|SECRET|PASS|PWD|CREDENTIAL|AUTH|COOKIE|SESSION|JWT|DSN"
    r"|(^|_)PAT(_|$)|PRIVATE|ACCESS_KEY",
    re.IGNORECASE,
)
_CREDENTIAL_VALUE = re.compile(
    r"[a-z][a-z0-9+.-]*://[^@]*@"  # scheme://user:password@ or scheme://token@
    r"|^[^\s:/@]+:[^\s@]+@[^\s@]+$"  # user:password@host
    r"|(^|[\s;&?])[\w.-]*(password|passwd|pwd|secret|token|api[-_]?key|apikey|signature"
    r"|credential|auth)[\w.-]*="  # password=..., ?client_secret=..., &X-Amz-Signature=...
    r"|^(bearer|basic|token)\s"  # an Authorization header's value
    r"|(^|[^a-z0-9])(ghp_|gho_|ghs_|github_pat_|glpat-|sk-|sk_live_|xox[abpr]-|AKIA|ASIA"
    r"|AIza|eyJ[a-z0-9_-]{8,}\.)",  # well-known token prefixes; a JWT's header
    re.IGNORECASE,
)


def forbidden_variable(name: str, value: str) -> bool:
    """Whether no sandboxed command may ever get ``name=value``.

    Neta's own variables (``NETA_*``), names of keys, tokens, secrets, passwords and
    credentials (``OPENAI_API_KEY``, ``GITHUB_TOKEN``, ``AWS_SECRET_ACCESS_KEY``...), and any
    value holding credentials: a URL with user information (``redis://:pw@host``,
    ``https://token@host``), ``user:password@host``, or a ``password=``-like pair.
    """
    return bool(_FORBIDDEN_NAMES.search(name) or _CREDENTIAL_VALUE.search(value))


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of every process in the sandbox (``setrlimit`` through ``prlimit``).

    Attributes:
        processes: processes and threads at once (``RLIMIT_NPROC``; as root, where the kernel
            ignores that limit, a ``pids`` control group enforces it when one can be made).
        file_size: the largest file a process may write, in bytes (``RLIMIT_FSIZE``).
        cpu_seconds: CPU time of each process (``RLIMIT_CPU``).
        open_files: open file descriptors of each process (``RLIMIT_NOFILE``).
        tmpfs_size: bytes ``/tmp`` and the home folder (empty in-memory folders) may hold,
            so that filling them cannot take the host's memory.
        small_tmpfs_size: bytes each other writable in-memory folder (``/run``,
            ``/var/tmp``, ``/dev/shm``, ``NETA_HOME``) may hold.
    """

    processes: int = 512
    file_size: int = 4 * 1024**3
    cpu_seconds: int = 900
    open_files: int = 4096
    tmpfs_size: int = 512 * 1024**2
    small_tmpfs_size: int = 64 * 1024**2

    def __post_init__(self) -> None:
        names = ("processes", "file_size", "cpu_seconds", "open_files", "tmpfs_size")
        for name in (*names, "small_tmpfs_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"sandbox limit {name} must be a positive integer, not {value!r}")


@dataclass(frozen=True)
class SandboxPolicy:
    """How commands the model runs are confined (bubblewrap).

    Attributes:
        enabled: ``False`` runs commands with the host's authority (``--sandbox off``).
        network: whether commands may reach the network (off: only their own loopback).
        read_write: more paths commands may write (the workspace always may).
        read_only: more paths shown read-only even where they would be hidden (under the
            home folder, say).
        env: variables set for every command, on top of the allow list.
        pass_env: names or ``fnmatch`` patterns of host variables passed on as they are;
            Neta's own (``NETA_*``), API keys and URLs with credentials never are.
        limits: resource limits.

    Raises:
        ConfigError: a path is not absolute, or ``env`` sets a variable no command may get.
    """

    enabled: bool = True
    network: bool = False
    read_write: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    pass_env: tuple[str, ...] = ()
    limits: SandboxLimits = field(default_factory=SandboxLimits)

    def __post_init__(self) -> None:
        for attribute in ("read_write", "read_only"):
            paths = tuple(Path(p) for p in getattr(self, attribute))
            relative = [str(p) for p in paths if not p.is_absolute()]
            if relative:
                raise ConfigError(f"sandbox {attribute} paths must be absolute: {relative[0]!r}")
            object.__setattr__(self, attribute, paths)
        object.__setattr__(self, "pass_env", tuple(self.pass_env))
        object.__setattr__(self, "env", dict(self.env))
        refused = sorted(
            name for name, value in self.env.items() if forbidden_variable(name, value)
        )
        if refused:
            raise ConfigError(
                f"sandbox env may not set {refused[0]}: Neta's own variables, API keys and URLs "
                f"with credentials never reach a sandboxed command"
            )

    @property
    def mode(self) -> str:
        """``on`` or ``off``."""
        return "on" if self.enabled else "off"

    def describe(self) -> str:
        """One line for listings: ``on (network off)``."""
        if not self.enabled:
            return "off: commands run with this process's authority"
        return f"on (network {'on' if self.network else 'off'})"


def sandbox_policy(value: SandboxPolicy | bool | str | Mapping[str, Any] | None) -> SandboxPolicy:
    """A policy from what a host or a user wrote.

    ``None`` and ``True``: the default (on, no network); ``False``: off; ``"on"``/``"off"``;
    a mapping of ``SandboxPolicy`` fields (``{"network": true}``); a policy as it is.

    Raises:
        ConfigError: anything else.
    """
    if isinstance(value, SandboxPolicy):
        return value
    if value is None or value is True:
        return SandboxPolicy()
    if value is False:
        return SandboxPolicy(enabled=False)
    if isinstance(value, str):
        if value not in MODES:
            raise ConfigError(f"sandbox must be one of {', '.join(MODES)}, not {value!r}")
        return SandboxPolicy(enabled=value == "on")
    if isinstance(value, Mapping):
        return _from_mapping(value)
    raise ConfigError(f"sandbox must be on, off or a SandboxPolicy, not {value!r:.80}")


def _from_mapping(raw: Mapping[str, Any]) -> SandboxPolicy:
    known = {"enabled", "network", "read_write", "read_only", "env", "pass_env", "limits"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(
            f"unknown sandbox setting {unknown[0]!r}; known: {', '.join(sorted(known))}"
        )
    fields = dict(raw)
    for flag in ("enabled", "network"):
        if flag in fields and not isinstance(fields[flag], bool):
            raise ConfigError(f"sandbox {flag} must be true or false, not {fields[flag]!r}")
    for listed in ("read_write", "read_only", "pass_env"):
        if listed in fields:
            items = fields[listed]
            if isinstance(items, str) or not all(isinstance(item, str) for item in items):
                raise ConfigError(f"sandbox {listed} must be a list of strings")
            fields[listed] = tuple(items)
    if "env" in fields and not (
        isinstance(fields["env"], Mapping)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in fields["env"].items())
    ):
        raise ConfigError("sandbox env must map names to strings")
    if "limits" in fields:
        limits = fields["limits"]
        if not isinstance(limits, Mapping):
            raise ConfigError("sandbox limits must map limit names to numbers")
        try:
            fields["limits"] = SandboxLimits(**limits)
        except TypeError as exc:
            raise ConfigError(f"sandbox limits: {exc}") from exc
    return SandboxPolicy(**fields)
