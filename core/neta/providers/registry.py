"""Finding a provider by name: the built-in ones plus those plugins register."""

from __future__ import annotations

from typing import Any

from pydantic import InstanceOf, TypeAdapter

from neta.errors import ConfigError
from neta.plugins import NetaPluginManager
from neta.providers.base import Provider, ProviderSpec
from neta.suggest import unknown_name_message

_SPECS: TypeAdapter[list[ProviderSpec]] = TypeAdapter(list[InstanceOf[ProviderSpec]])


def _openai(**options: Any) -> Provider:
    from neta.providers.openai_compat import OpenAIProvider  # the SDK loads only when used

    return OpenAIProvider(**options)


def _scripted(*, script: str | None = None, **_ignored: Any) -> Provider:
    from neta.providers.scripted import ScriptedProvider

    if not script:
        raise ConfigError("the scripted provider needs a script: --script FILE.json")
    return ScriptedProvider.from_file(script)


BUILTIN_PROVIDERS = (
    ProviderSpec(name="openai", description="OpenAI-compatible Chat Completions", factory=_openai),
    ProviderSpec(name="scripted", description="Replays a JSON script (offline)", factory=_scripted),
)
"""The providers Neta ships; plugins add others, never replace these."""


def provider_specs(pm: NetaPluginManager | None) -> dict[str, ProviderSpec]:
    """Every provider by name: built-ins first; a plugin cannot replace a built-in."""
    specs = {spec.name: spec for spec in BUILTIN_PROVIDERS}
    if pm is None:
        return specs
    for plugin, found in pm.call_each("neta_providers", _SPECS):
        for spec in found:
            if spec.name in specs:
                pm.record_for(plugin, f"provider {spec.name!r} is already registered")
            else:
                specs[spec.name] = spec
    return specs


def create_provider(name: str, pm: NetaPluginManager | None = None, **options: Any) -> Provider:
    """Create provider ``name`` with ``options`` (``None`` values are left out)."""
    specs = provider_specs(pm)
    if name not in specs:
        raise ConfigError(unknown_name_message("provider", name, specs))
    return specs[name].factory(**{k: v for k, v in options.items() if v is not None})
