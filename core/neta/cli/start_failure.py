"""A server that cannot start says why in one ``Error:`` line and exits 2.

Whatever stops ``neta serve`` from making its parts (the agent and its plugins, the store,
the bus) is a problem with what it was given or where it runs, not a bug: a home folder it
cannot make, a database file it cannot open or that is no database, a store or a bus that does
not answer. Each becomes a ``ConfigError`` (exit 2, as the documentation states for a failed
start); a bug still shows as one.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

from neta.errors import ConfigError, NetaError, os_reason


@contextlib.contextmanager
def start_failures(store: str) -> Iterator[None]:
    """Turn what stops the server's parts from being made into a ``ConfigError``.

    ``store`` names the store (``SQLite /path/neta.db``), for a file error that does not.

    Raises:
        ConfigError: the parts could not be made.
    """
    try:
        yield
    except ConfigError:
        raise
    except NetaError as exc:
        raise ConfigError(str(exc)) from exc
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        raise ConfigError(f"cannot start: {where}{os_reason(exc)} (store: {store})") from exc
    except sqlite3.Error as exc:
        raise ConfigError(f"cannot start: {exc} (store: {store})") from exc
