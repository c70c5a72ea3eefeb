"""Where the provider connects, and with which key: given, or from the environment."""

from __future__ import annotations

import neta

ENV_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL")
"""The environment variables the provider reads."""


def endpoint(base_url: str | None, api_key: str | None) -> tuple[str | None, str | None]:
    """The base URL and key: the ones given, else ``ANTHROPIC_BASE_URL`` / ``ANTHROPIC_API_KEY``.

    Raises:
        ConfigError: neither a base URL nor a key, from options or the environment.
    """
    return neta.provider_endpoint(
        base_url,
        api_key,
        base_url_var="ANTHROPIC_BASE_URL",
        api_key_var="ANTHROPIC_API_KEY",
        missing="the anthropic provider needs an API key: set ANTHROPIC_API_KEY (or --api-key), "
        "or ANTHROPIC_BASE_URL (or --base-url) for a proxy that needs none",
    )
