"""Finding a provider by name: the built-in ones plus those plugins register.

A model may be named with its provider in front, ``provider:model`` (``anthropic:claude-…``,
``openai:gpt-4o``), wherever a model is named. The prefix counts only when it is the name of a
known provider, so a model tag such as Ollama's ``qwen2.5-coder:7b`` stays a model name.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from typing import Any

from pydantic import InstanceOf, TypeAdapter

from neta.errors import ConfigError
from neta.plugins import NetaPluginManager, PluginInfo
from neta.providers.base import Provider, ProviderSpec
from neta.providers.endpoint import openai_endpoint
from neta.suggest import unknown_name_message

_SPECS: TypeAdapter[list[ProviderSpec]] = TypeAdapter(list[InstanceOf[ProviderSpec]])

DEFAULT_PROVIDER = "openai"
"""The provider used when neither ``--provider`` nor a ``provider:`` prefix names one."""


def _openai(**options: Any) -> Provider:
    openai_endpoint(options.get("base_url"), options.get("api_key"))  # before the SDK loads
    from neta.providers.openai_compat import OpenAIProvider  # the SDK loads only when used

    return OpenAIProvider(**options)


def _scripted(*, script: str | None = None, **_ignored: Any) -> Provider:
    from neta.providers.scripted import ScriptedProvider

    if not script:
        raise ConfigError("the scripted provider needs a script: --script FILE.json")
    return ScriptedProvider.from_file(script)


BUILTIN_PROVIDERS = (
    ProviderSpec(
        name="openai",
        description="OpenAI-compatible Chat Completions",
        factory=_openai,
        env_vars=("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"),
    ),
    ProviderSpec(name="scripted", description="Replays a JSON script (offline)", factory=_scripted),
)
"""The providers Neta ships; plugins add others, never replace these."""


@dataclass(frozen=True)
class ProviderEntry:
    """A registered provider and where it came from.

    Attributes:
        spec: the provider's spec.
        plugin: the plugin that registered it (``None`` for the core's own).
    """

    spec: ProviderSpec
    plugin: PluginInfo | None = None

    @property
    def source(self) -> str:
        """Where it comes from, in words: ``core``, or the plugin and its distribution."""
        if self.plugin is None:
            return "core"
        info = self.plugin
        kind = "built-in plugin" if info.builtin else "plugin"
        if info.distribution is None:
            return f"{kind} {info.name}"
        version = f" {info.version}" if info.version else ""
        return f"{kind} {info.name} from {info.distribution}{version}"


def provider_entries(pm: NetaPluginManager | None) -> list[ProviderEntry]:
    """Every provider with its origin: built-ins first; a plugin cannot replace a built-in."""
    entries = {spec.name: ProviderEntry(spec) for spec in BUILTIN_PROVIDERS}
    if pm is not None:
        for plugin, found in pm.call_each("neta_providers", _SPECS):
            for spec in found:
                if spec.name in entries:
                    pm.record_for(plugin, f"provider {spec.name!r} is already registered")
                else:
                    entries[spec.name] = ProviderEntry(spec, pm.info(plugin))
    return list(entries.values())


def provider_specs(pm: NetaPluginManager | None) -> dict[str, ProviderSpec]:
    """Every provider by name: built-ins first; a plugin cannot replace a built-in."""
    return {entry.spec.name: entry.spec for entry in provider_entries(pm)}


def split_model_name(model: str, providers: Container[str]) -> tuple[str | None, str]:
    """Split ``provider:model`` when ``provider`` is one of ``providers``.

    ``("anthropic", "claude-x")`` for ``anthropic:claude-x``; ``(None, model)`` when the
    part before the colon is no provider's name (``qwen2.5-coder:7b``).
    """
    prefix, colon, rest = model.partition(":")
    if colon and rest and prefix in providers:
        return prefix, rest
    return None, model


def resolve_model_name(
    provider: str | None, model: str, pm: NetaPluginManager | None
) -> tuple[str | None, str]:
    """The provider and the bare model name for ``--provider`` and a maybe-prefixed model.

    ``provider`` may be ``None`` (not given): the model's prefix names it, or nothing does.

    Raises:
        ConfigError: the provider given and the model's prefix disagree.
    """
    if ":" not in model:
        return provider, model
    named, bare = split_model_name(model, provider_specs(pm))
    if named is None:
        return provider, model
    if provider is not None and provider != named:
        raise ConfigError(
            f"the model {model!r} names provider {named!r} but the provider given is "
            f"{provider!r}; drop one of them"
        )
    return named, bare


def create_provider(name: str, pm: NetaPluginManager | None = None, **options: Any) -> Provider:
    """Create provider ``name`` with ``options`` (``None`` values are left out)."""
    specs = provider_specs(pm)
    if name not in specs:
        raise ConfigError(unknown_name_message("provider", name, specs))
    return specs[name].factory(**{k: v for k, v in options.items() if v is not None})
