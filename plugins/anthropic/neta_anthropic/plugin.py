"""Registers the ``anthropic`` provider; the SDK is imported only when the provider is made."""

from __future__ import annotations

from typing import Any

import neta

INSTALL = "pip install 'neta[anthropic]'"
"""What to install for the provider to work."""

ENV_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL")
"""The environment variables the provider reads."""


def create(**options: Any) -> neta.Provider:
    """Make an ``AnthropicProvider`` with ``options``, or say that the SDK is missing.

    Raises:
        ConfigError: the ``anthropic`` SDK is not installed.
    """
    try:
        import anthropic  # noqa: F401  (only to learn whether it is installed)
    except ImportError as exc:
        raise neta.ConfigError(
            f"the anthropic provider needs the anthropic SDK, which is not installed: {INSTALL}"
        ) from exc
    from neta_anthropic.provider import AnthropicProvider

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
