"""Where the ``openai`` provider sends its requests, settled before its SDK is imported.

Importing the ``openai`` SDK takes about a second of CPU, so a command given neither a key nor a
base URL says so before it pays for that.
"""

from __future__ import annotations

import os

from neta.errors import ConfigError


def openai_endpoint(base_url: str | None, api_key: str | None) -> tuple[str | None, str | None]:
    """The base URL and key: the ones given, else ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``.

    Raises:
        ConfigError: neither a base URL nor a key, from options or the environment.
    """
    base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
    api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
    if base_url is None and api_key is None:
        raise ConfigError(
            "the openai provider needs an API key or a base URL: set OPENAI_API_KEY "
            "(or --api-key), or OPENAI_BASE_URL (or --base-url) for a local server"
        )
    return base_url, api_key
