"""The environment of a sandboxed command: built from an allow list, never from a deny list."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

from neta.sandbox._policy import SandboxPolicy, forbidden_variable

PASSED = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
    "USER",
    "LOGNAME",
)
"""Host variables every sandboxed command gets (names or ``fnmatch`` patterns)."""

SET = {"PAGER": "cat", "GIT_PAGER": "cat", "TMPDIR": "/tmp", "SHELL": "/bin/bash"}
"""Values every sandboxed command gets: there is no terminal to page output on."""


def sandbox_environment(
    policy: SandboxPolicy,
    host: Mapping[str, str],
    *,
    home: str,
) -> dict[str, str]:
    """What a command confined by ``policy`` sees: the allow list, ``home``, the host's additions.

    Args:
        policy: its ``pass_env`` names more host variables, its ``env`` sets values.
        host: the host's environment.
        home: the value of ``HOME`` (an empty folder in the sandbox).

    A variable ``forbidden_variable`` names is left out whatever asked for it.
    """
    patterns = (*PASSED, *policy.pass_env)
    passed = {
        name: value
        for name, value in host.items()
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)
        and not forbidden_variable(name, value)
    }
    return {**passed, **SET, "HOME": home, **policy.env}
