"""Registers the ``anthropic`` provider; the SDK is imported only when the provider is made."""

from __future__ import annotations

import importlib.util
from typing import Any

import neta
from neta_anthropic.endpoint import ENV_VARS, endpoint

INSTALL = "pip install 'neta[anthropic]'"
"""What to install for the provider to work."""


def create(**options: Any) -> neta.Provider:
    """Make an ``AnthropicProvider`` with ``options``, or say what it lacks.

    What it lacks (the SDK itself, or a key or base URL) is found before the SDK is imported,
    which takes seconds of CPU.

    Raises:
        ConfigError: the ``anthropic`` SDK is not installed or does not load, or neither a key
            nor a URL is set.
    """
    if importlib.util.find_spec("anthropic") is None:
        raise neta.ConfigError(
            f"the anthropic provider needs the anthropic SDK, which is not installed: {INSTALL}"
        )
    endpoint(options.get("base_url"), options.get("api_key"))
    try:
        from neta_anthropic.provider import AnthropicProvider
    except ImportError as exc:  # installed, but it (or what it needs) does not load
        raise neta.ConfigError(
            f"the anthropic provider could not load the anthropic SDK ({exc}): {INSTALL}"
        ) from exc

    return AnthropicProvider(**options)


@neta.hookimpl
def neta_providers() -> list[neta.ProviderSpec]:
    """The ``anthropic`` provider."""
    return [
        neta.ProviderSpec(
            name="anthropic",
            description="Anthropic Messages API (streaming, tool use, prompt caching)",
            factory=create,
            env_vars=ENV_VARS,
            install=INSTALL,
        )
    ]
