"""Where a provider sends its requests: a base URL and a key, from options or the environment.

Settled before the provider's SDK is imported (the ``openai`` SDK's import takes about a second
of CPU, ``anthropic``'s more), so a command given neither says so at once.
"""

from __future__ import annotations

import os

from neta.errors import ConfigError


def provider_endpoint(
    base_url: str | None,
    api_key: str | None,
    *,
    base_url_var: str,
    api_key_var: str,
    missing: str,
) -> tuple[str | None, str | None]:
    """The base URL and key: the ones given, else those the environment names.

    ``base_url_var`` and ``api_key_var`` name the variables (an empty value counts as none).
    At least one of the two must be set.

    Raises:
        ConfigError: neither a base URL nor a key; its message is ``missing``.
    """
    base_url = base_url or os.environ.get(base_url_var) or None
    api_key = api_key or os.environ.get(api_key_var) or None
    if base_url is None and api_key is None:
        raise ConfigError(missing)
    return base_url, api_key


def openai_endpoint(base_url: str | None, api_key: str | None) -> tuple[str | None, str | None]:
    """The ``openai`` provider's base URL and key (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``)."""
    return provider_endpoint(
        base_url,
        api_key,
        base_url_var="OPENAI_BASE_URL",
        api_key_var="OPENAI_API_KEY",
        missing="the openai provider needs an API key or a base URL: set OPENAI_API_KEY "
        "(or --api-key), or OPENAI_BASE_URL (or --base-url) for a local server",
    )
