"""The sandbox every command the model runs gets: bubblewrap, built per call from a policy.

``SandboxPolicy`` says what a command may do (network, more paths, environment, limits);
``confine`` wraps a command line so that it runs under ``bwrap`` accordingly, with an
environment built from an allow list. Where bubblewrap is missing or user namespaces are
off, ``sandbox_unavailable`` says why in one line and ``confine`` raises ``ToolError`` with
it: a command is never run unconfined without the host choosing ``--sandbox off``.
"""

from neta.sandbox._bwrap import (
    BWRAP_VARIABLE,
    KERNEL_SWITCHES,
    Confined,
    bwrap_path,
    confine,
    sandbox_unavailable,
)
from neta.sandbox._environment import PASSED, SET, sandbox_environment
from neta.sandbox._layout import (
    CREDENTIAL_NAMES,
    HIDDEN_SYSTEM,
    ROOT_SCANNED,
    TOOLCHAIN_PARTS,
    Layout,
    host_layout,
)
from neta.sandbox._pids import PidsGroup
from neta.sandbox._policy import (
    MODES,
    SandboxLimits,
    SandboxPolicy,
    forbidden_variable,
    sandbox_policy,
)

__all__ = [
    "BWRAP_VARIABLE",
    "CREDENTIAL_NAMES",
    "HIDDEN_SYSTEM",
    "KERNEL_SWITCHES",
    "MODES",
    "PASSED",
    "ROOT_SCANNED",
    "SET",
    "TOOLCHAIN_PARTS",
    "Confined",
    "Layout",
    "PidsGroup",
    "SandboxLimits",
    "SandboxPolicy",
    "bwrap_path",
    "confine",
    "forbidden_variable",
    "host_layout",
    "sandbox_environment",
    "sandbox_policy",
    "sandbox_unavailable",
]
