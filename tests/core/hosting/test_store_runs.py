"""The store keeps which runs are going, beside the sessions: SQLite and PostgreSQL alike."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from neta.hosting.engines import open_store
from neta.hosting.store import Store
from neta.hosting.store.sqlite import SqliteStore
from neta.messages import Message


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    opened = open_store(tmp_path / "home", url)
    yield opened
    asyncio.run(opened.run_calls().close())
    opened.close()


def _msgs(*texts: str) -> list[Message]:
    return [Message(role="user", content=t) for t in texts]


def test_a_run_marked_going_is_ended_by_the_save_that_says_so(store):
    store.create("s1", "gateway")
    assert store.acquire("s1", "me", 30)
    store.save("s1", [], owner="me", run="going")
    assert store.load("s1").run_owner == "me"
    store.save("s1", _msgs("hi"), owner="me")  # a save that says nothing of the run
    assert store.load("s1").run_owner == "me"
    store.save("s1", _msgs("hi", "hello"), owner="me", run="ended")
    saved = store.load("s1")
    assert (saved.run_owner, saved.history) == (None, _msgs("hi", "hello"))


def test_a_run_mark_its_owner_no_longer_leases_is_an_interrupted_run(store):
    for name in ("going", "leased", "ended"):
        store.create(name, "service")
        assert store.acquire(name, "dead", 30)
        store.save(name, [], owner="dead", run="going")
    store.save("ended", [], owner="dead", run="ended")
    assert store.interrupted_runs() == []  # every lease is live
    store.release("going", "dead")
    store.release("ended", "dead")
    assert store.interrupted_runs() == ["going"]


def test_an_interrupted_run_nobody_was_told_of_is_told_once(store):
    store.create("s1", "gateway")
    assert store.acquire("s1", "me", 30)
    assert not store.take_interrupted("s1")
    store.save("s1", _msgs("note"), owner="me", run="interrupted")
    assert store.load("s1").run_owner is None
    assert store.take_interrupted("s1")
    assert not store.take_interrupted("s1")
    store.save("s1", [], owner="me", start=1, run="interrupted")
    store.save("s1", [], owner="me", start=1, run="going")  # a new run: that one is old news
    assert not store.take_interrupted("s1")


def test_the_owners_of_live_leases_are_listed_and_freed_whole(store):
    for name in ("a1", "a2", "b1", "c1"):
        store.create(name, "service")
    assert store.acquire("a1", "a", 30)
    assert store.acquire("a2", "a", 30)
    assert store.acquire("b1", "b", 30)
    assert store.acquire("c1", "c", 0.05)
    time.sleep(0.2)
    assert store.lease_owners() == ["a", "b"]

    async def free() -> None:
        calls = store.run_calls()
        await calls.release_all("a")
        await calls.close()

    asyncio.run(free())
    assert (store.owner("a1"), store.owner("a2"), store.owner("b1")) == (None, None, "b")


def test_the_run_calls_keep_runs_as_the_store_does(store):
    async def scenario() -> None:
        calls = store.run_calls()
        await calls.create("s1", "gateway")
        assert await calls.acquire("s1", "me", 30)
        await calls.save("s1", _msgs("hi"), owner="me", run="going")
        assert (await calls.load("s1")).run_owner == "me"
        assert await calls.lease_owners() == ["me"]
        await calls.release("s1", "me")
        assert await calls.interrupted_runs() == ["s1"]
        assert await calls.acquire("s1", "other", 30)
        await calls.save("s1", [], owner="other", start=1, run="interrupted")
        assert await calls.interrupted_runs() == []
        assert await calls.take_interrupted("s1")
        await calls.close()

    asyncio.run(scenario())


def test_a_sqlite_file_written_before_runs_were_kept_is_migrated(tmp_path):
    path = tmp_path / "neta.db"
    SqliteStore(path).close()
    with sqlite3.connect(path) as db:  # as an older Neta left it
        db.execute("DROP INDEX sessions_running")
        db.execute("ALTER TABLE sessions DROP COLUMN run_interrupted")
        db.execute("ALTER TABLE sessions DROP COLUMN run_owner")
        db.execute("INSERT INTO sessions (id, entry, created, updated) VALUES ('old', 'x', 0, 0)")
    store = SqliteStore(path)
    try:
        assert store.load("old").run_owner is None
        assert store.acquire("old", "me", 30)
        store.save("old", [], owner="me", run="going")
        store.release("old", "me")
        assert store.interrupted_runs() == ["old"]
    finally:
        store.close()


def test_a_postgres_database_of_schema_2_is_migrated_to_keep_runs(postgres_url):
    import psycopg

    from neta.hosting.store import postgres_sql as sql
    from neta.hosting.store.postgres import SCHEMA_VERSION, PostgresStore

    with psycopg.connect(postgres_url, autocommit=True) as db, db.transaction():
        db.execute("CREATE TABLE neta_schema (version INTEGER NOT NULL)")
        for step in (1, 2):  # as an older Neta left it
            db.execute(sql.MIGRATIONS[step].encode())
            db.execute("INSERT INTO neta_schema VALUES (%s)", (step,))
        db.execute("INSERT INTO sessions (id, entry, created, updated) VALUES ('old', 'x', 0, 0)")
    store = PostgresStore(postgres_url)
    try:
        assert store.schema_version() == SCHEMA_VERSION
        assert store.load("old").run_owner is None
        assert store.acquire("old", "me", 30)
        store.save("old", [], owner="me", run="going")
        store.release("old", "me")
        assert store.interrupted_runs() == ["old"]
    finally:
        store.close()
