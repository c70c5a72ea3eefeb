"""The parts a hub is built of, made from its ``HostConfig``: its agent, its store and its bus."""

from __future__ import annotations

import asyncio

from neta.home import neta_home, usable_home
from neta.hosting.cluster.bus import Bus
from neta.hosting.config import HostConfig
from neta.hosting.engines import database_url, open_bus, open_store, redis_url
from neta.hosting.store import Store
from neta.plugins import NetaPluginManager, create_plugin_manager
from neta.providers.base import Provider
from neta.providers.registry import create_provider
from neta.runtime.agent import Agent


def check_config(config: HostConfig) -> None:
    """Make, then close, the agent (its provider, its toolsets), store and bus a hub would make.

    For a command starting worker processes that each make a hub: a configuration none of them
    could use is one error here, before any starts. Call it where no event loop runs.

    Raises:
        NetaError: the provider, the store or the bus cannot be made, or a toolset is unknown.
    """
    pm = config.plugin_manager or create_plugin_manager()
    try:
        agent_of(config, pm)
    finally:  # what plugins started for the check (MCP servers) is the workers' to start
        pm.release_host()
    store_of(config).close()
    asyncio.run(bus_of(config).close())


def agent_of(config: HostConfig, pm: NetaPluginManager) -> Agent:
    """The agent of a hub: its provider made, its toolset names checked."""
    return Agent(
        provider=provider_of(config, pm),
        model=config.model,
        toolsets=config.toolsets,
        deny=config.deny,
        workspace=config.workspace,
        plugin_manager=pm,
        max_turns=config.max_turns,
        permissions=config.permissions,
        **config.agent_options,
    )


def provider_of(config: HostConfig, pm: NetaPluginManager) -> Provider:
    """The model provider of a hub's sessions (each session gets its own)."""
    if config.provider_factory is not None:
        return config.provider_factory()
    options = {"model": config.model, **config.provider_options}
    return create_provider(config.provider, pm, **options)


def store_of(config: HostConfig) -> Store:
    """The store of a hub: SQLite in its home, or the database its config names."""
    return open_store(usable_home(config.home or neta_home()), database_url(config.database_url))


def bus_of(config: HostConfig) -> Bus:
    """The bus of a hub: in-process, or the Redis its config names."""
    return open_bus(redis_url(config.redis_url))
