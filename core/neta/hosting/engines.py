"""Which engines a host process uses: the ``Store`` and the ``Bus``, chosen by URL.

Nothing set means one process on one machine: the store is SQLite in ``NETA_HOME/neta.db``
and the bus is in-process. ``NETA_DATABASE_URL=postgresql://…`` puts the store in PostgreSQL
and ``NETA_REDIS_URL=redis://…`` puts the bus in Redis; both need the ``neta[scale]`` extra.
"""

from __future__ import annotations

import os
from pathlib import Path

from neta.errors import ConfigError, StorageUnavailable
from neta.hosting.cluster.bus import Bus, LocalBus
from neta.hosting.store import Store
from neta.safe_url import safe_url

DATABASE_URL_ENV = "NETA_DATABASE_URL"
REDIS_URL_ENV = "NETA_REDIS_URL"


def database_url(explicit: str | None = None) -> str | None:
    """The store's database URL: ``explicit``, else ``NETA_DATABASE_URL``, else none (SQLite)."""
    return explicit or os.environ.get(DATABASE_URL_ENV) or None


def redis_url(explicit: str | None = None) -> str | None:
    """The bus's Redis URL: ``explicit``, else ``NETA_REDIS_URL``, else none (in-process)."""
    return explicit or os.environ.get(REDIS_URL_ENV) or None


def open_store(home: Path, url: str | None) -> Store:
    """The store at ``url`` (``postgresql://…``), or SQLite in ``home`` when ``url`` is ``None``.

    A host does not start on a database it cannot use: it would run blind.

    Raises:
        ConfigError: ``url`` names an engine Neta does not know, or its database cannot be
            reached or used (one line naming it, without its password).
    """
    if url is None:
        from neta.hosting.store.sqlite import SqliteStore

        return SqliteStore(home / "neta.db")
    if url.startswith(("postgresql://", "postgres://")):
        from neta.hosting.store.postgres import PostgresStore

        try:
            return PostgresStore(url)
        except StorageUnavailable as exc:
            raise ConfigError(f"PostgreSQL: {exc}") from exc
    scheme = safe_url(url).partition("://")[0]  # not a URL: the whole, masked
    raise ConfigError(f"unknown session store {scheme!r}: use a postgresql:// URL")


def describe_store(home: Path, url: str | None) -> str:
    """One line naming the store, fit to print (no password)."""
    if url is None:
        return f"SQLite {home / 'neta.db'}"
    return f"PostgreSQL {safe_url(url)}"


def open_bus(url: str | None) -> Bus:
    """The Redis bus at ``url``, or the in-process bus when ``url`` is ``None``.

    Raises:
        ConfigError: ``url`` is not a ``redis://`` URL, the extra is missing, or the server
            does not answer (one line naming it, without its password).
    """
    if url is None:
        return LocalBus()
    if url.startswith(("redis://", "rediss://", "unix://")):
        from neta.hosting.cluster.redis_bus import RedisBus, ping

        bus = RedisBus(url)
        try:
            ping(url)
        except StorageUnavailable as exc:
            raise ConfigError(f"Redis: {exc}") from exc
        return bus
    scheme = safe_url(url).partition("://")[0]  # not a URL: the whole, masked
    raise ConfigError(f"unknown bus {scheme!r}: use a redis:// URL")
