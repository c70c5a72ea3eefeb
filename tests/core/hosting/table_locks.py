"""A PostgreSQL table locked from another connection, and waiting until someone waits for it:
how the tests show that a host's event loop goes on while a statement waits on the database."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass

import psycopg

HELD_SECONDS = 30.0
"""The longest a table stays locked: a test lets go as soon as it has seen what it needs."""


@dataclass
class HeldTable:
    """A lock held in its own thread until ``done`` is set; ``released`` once it is gone."""

    thread: threading.Thread
    done: threading.Event
    released: threading.Event

    def let_go(self) -> None:
        """Release the lock and wait until it is gone."""
        self.done.set()
        self.thread.join()


def hold_table(url: str, table: str, mode: str = "EXCLUSIVE") -> HeldTable:
    """Lock ``table`` of the database at ``url`` in ``mode`` until ``let_go`` (``HELD_SECONDS``
    at most)."""
    locked, done, released = threading.Event(), threading.Event(), threading.Event()

    def hold() -> None:
        with psycopg.connect(url) as db:
            db.execute(f"LOCK TABLE {table} IN {mode} MODE".encode())
            locked.set()
            done.wait(HELD_SECONDS)
            db.rollback()
            released.set()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    assert locked.wait(10)
    return HeldTable(thread, done, released)


async def until_waited_on(url: str, table: str) -> None:
    """Return once a connection to the database at ``url`` waits for a lock on ``table``.

    It asks from a thread: an event loop that waited on the database itself would only see the
    answer once the lock is gone.
    """

    def poll() -> None:
        with psycopg.connect(url, autocommit=True) as db:
            for _ in range(2000):
                row = db.execute(
                    "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = %s::regclass",
                    (table,),
                ).fetchone()
                if row and row[0]:
                    return
                time.sleep(0.01)
        raise AssertionError(f"nothing waited for {table}")

    await asyncio.to_thread(poll)
