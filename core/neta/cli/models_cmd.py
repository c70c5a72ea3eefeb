"""``neta models``: the models a provider's API lists."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer

from neta.cli.context import echo_json, plugin_manager
from neta.cli.options import (
    AgentOptions,
    ApiKeyFileOpt,
    ApiKeyOpt,
    BaseUrlOpt,
    ProviderOpt,
    ScriptOpt,
)
from neta.errors import NetaError
from neta.providers.registry import DEFAULT_PROVIDER, create_provider
from neta.terminal_text import sanitize


def models(
    ctx: typer.Context,
    provider: str | None = ProviderOpt,
    base_url: str | None = BaseUrlOpt,
    api_key: str | None = ApiKeyOpt,
    api_key_file: Path | None = ApiKeyFileOpt,
    script: Path | None = ScriptOpt,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the models the provider's API offers (one per line), to choose one with -m."""
    options = AgentOptions.from_flags(
        provider=provider,
        base_url=base_url,
        api_key=api_key,
        api_key_file=api_key_file,
        script=script,
    )
    name = options.provider or DEFAULT_PROVIDER
    made = create_provider(name, plugin_manager(ctx), **options.provider_options())
    lister = getattr(made, "list_models", None)
    if lister is None:
        raise NetaError(f"provider {name!r} has no model list to show")
    names = asyncio.run(lister())
    if as_json:
        echo_json(names)
        return
    for model in names:
        typer.echo(sanitize(model))
