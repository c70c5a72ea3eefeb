"""What a ``bash`` command sees of the host's environment: all of it but the secrets.

A model can run ``env``, so whatever the host process holds would reach the model (and
anyone it repeats it to). The child gets the host's environment minus ``DEFAULT_DENIED``:
Neta's own secret (``NETA_TOKEN``, the gateway's token) and model-provider credentials
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ... and any ``*_API_KEY``).

A host changes the lists with comma-separated names or ``fnmatch`` patterns, either for the
whole process in ``NETA_BASH_ENV_DENY`` / ``NETA_BASH_ENV_ALLOW`` or per session in
``session.extras["bash_env_deny"]`` / ``session.extras["bash_env_allow"]`` (lists of names).
Allowing wins over denying, except that ``NETA_TOKEN`` is never passed on.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
from collections.abc import Iterable, Mapping
from typing import Any

import neta
from neta.sandbox import SandboxPolicy

NEVER_PASSED = frozenset({"NETA_TOKEN"})
"""Names no configuration lets through."""

DEFAULT_DENIED = (
    "NETA_TOKEN",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "OPENROUTER_API_KEY",
    "DEEPSEEK_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "XAI_API_KEY",
    "COHERE_API_KEY",
    "CO_API_KEY",
    "PERPLEXITY_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "*_API_KEY",
)
"""Names and patterns kept from ``bash`` commands unless a host allows them."""

DENY_VARIABLE = "NETA_BASH_ENV_DENY"
"""Host environment variable: more names or patterns to keep from commands (comma list)."""

ALLOW_VARIABLE = "NETA_BASH_ENV_ALLOW"
"""Host environment variable: denied names or patterns to pass on after all (comma list)."""

DENY_KEY = "bash_env_deny"
"""``session.extras`` key: more names or patterns to keep from this session's commands."""

ALLOW_KEY = "bash_env_allow"
"""``session.extras`` key: denied names or patterns this session's commands get after all."""

NON_INTERACTIVE = {"PAGER": "cat", "GIT_PAGER": "cat"}
"""Set for every command: there is no terminal to page output on."""


def child_environment(
    base: Mapping[str, str], *, deny: Iterable[str], allow: Iterable[str]
) -> dict[str, str]:
    """``base`` minus ``DEFAULT_DENIED`` and ``deny``, plus back what ``allow`` names.

    ``NETA_TOKEN`` is left out whatever ``allow`` says.
    """
    denied = (*DEFAULT_DENIED, *deny)
    allowed = tuple(allow)
    return {
        name: value
        for name, value in base.items()
        if name not in NEVER_PASSED and (not _matches(name, denied) or _matches(name, allowed))
    }


def for_session(session: neta.SessionContext | None) -> dict[str, str]:
    """The environment a command of ``session`` runs with (see the module docs).

    ``None``: a command of no session (only the host's lists apply).

    Raises:
        neta.ConfigError: an ``extras`` list is not a string or a list of strings.
    """
    deny = _listed(os.environ.get(DENY_VARIABLE, ""))
    allow = _listed(os.environ.get(ALLOW_VARIABLE, ""))
    if session is not None:
        deny += _extra(session, DENY_KEY)
        allow += _extra(session, ALLOW_KEY)
    return {**child_environment(os.environ, deny=deny, allow=allow), **NON_INTERACTIVE}


def sandbox_for_session(session: neta.SessionContext) -> SandboxPolicy:
    """``session``'s sandbox policy, passing on what its host allowed by name.

    A sandboxed command's environment is built from an allow list (``neta.sandbox``); the
    names and patterns of ``NETA_BASH_ENV_ALLOW`` and ``extras["bash_env_allow"]`` join it
    (still never Neta's own variables, API keys or URLs with credentials).

    Raises:
        neta.ConfigError: an ``extras`` list is not a string or a list of strings.
    """
    allowed = [*_listed(os.environ.get(ALLOW_VARIABLE, "")), *_extra(session, ALLOW_KEY)]
    policy = session.sandbox
    return dataclasses.replace(policy, pass_env=(*policy.pass_env, *allowed))


def for_host() -> dict[str, str]:
    """The environment of a command outside any session: ``for_session(None)``."""
    return for_session(None)


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _listed(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _extra(session: neta.SessionContext, key: str) -> list[str]:
    value: Any = session.extras.get(key, ())
    if isinstance(value, str):
        return _listed(value)
    if isinstance(value, Iterable) and all(isinstance(item, str) for item in value):
        return list(value)
    raise neta.ConfigError(f"session.extras[{key!r}] must be a list of variable names")
