"""What a model provider is, and how a plugin registers one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ProviderSpec(BaseModel):
    """A named model provider, registered through the ``neta_providers`` hook.

    Attributes:
        name: what users pass to ``--provider``.
        description: one line for listings.
        factory: called with keyword options (``model``, ``base_url``, ``api_key``...) to
            create the provider.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    description: str = ""
    factory: Callable[..., Any]
