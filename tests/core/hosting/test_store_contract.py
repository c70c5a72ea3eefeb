"""The ``Store`` contract, held by every engine: SQLite (the default) and PostgreSQL."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from neta.errors import SessionOwned, StorageUnavailable, UnknownSession
from neta.hosting.engines import open_store
from neta.hosting.store import Store, StoredQuestion, StoredSession
from neta.messages import Message
from tests.services import free_port

OpenStore = Callable[[], Store]


@pytest.fixture(params=["sqlite", "postgres"])
def open_shared(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenStore]:
    """Opens stores of one home (two of them are two processes sharing it)."""
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    opened: list[Store] = []

    def make() -> Store:
        store = open_store(tmp_path / "home", url)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(open_shared: OpenStore) -> Store:
    """One store."""
    return open_shared()


def _msgs(*texts: str) -> list[Message]:
    return [Message(role="user", content=t) for t in texts]


def test_a_session_is_created_saved_loaded_and_deleted(store):
    store.create("s1", "gateway")
    assert store.exists("s1")
    assert store.load("s1").history == []
    assert store.acquire("s1", "me", 30)
    version = store.save("s1", _msgs("a", "b"), owner="me", todos='{"items": []}')
    saved = store.load("s1")
    assert (saved.entry, saved.history, saved.todos) == (
        "gateway",
        _msgs("a", "b"),
        '{"items": []}',
    )
    assert saved.version == version == store.version("s1")
    store.delete("s1")
    assert not store.exists("s1")
    assert store.load("s1") is None
    assert store.version("s1") is None


def test_save_replaces_only_from_start_and_counts_versions(store):
    store.create("s1", "service")
    store.acquire("s1", "me", 30)
    first = store.save("s1", _msgs("a", "b", "c"), owner="me")
    second = store.save("s1", _msgs("B"), owner="me", start=1)
    assert second == first + 1
    assert store.load("s1").history == _msgs("a", "B")
    assert store.load("s1").todos is None


def test_only_the_lease_holder_saves(store):
    store.create("s1", "gateway")
    with pytest.raises(SessionOwned):
        store.save("s1", _msgs("a"), owner="me")
    assert store.acquire("s1", "other", 30)
    with pytest.raises(SessionOwned):
        store.save("s1", _msgs("a"), owner="me", todos="[]")
    assert store.load("s1") == StoredSession("s1", "gateway", [], None, version=0)


def test_one_owner_at_a_time_until_release_or_expiry(open_shared):
    first, second = open_shared(), open_shared()
    first.create("s1", "gateway")
    assert first.acquire("s1", "a", 30)
    assert first.acquire("s1", "a", 30)  # renewing is taking again
    assert not second.acquire("s1", "b", 30)
    assert second.owner("s1") == "a"
    first.release("s1", "b")  # not b's to release
    assert not second.acquire("s1", "b", 30)
    first.release("s1", "a")
    for _ in range(5):  # again if the machine was so busy that b's lease ran out before a asked
        asked = time.monotonic()
        assert second.acquire("s1", "b", 0.3)
        refused = not first.acquire("s1", "a", 30)
        if time.monotonic() - asked < 0.3:
            break
        first.release("s1", "a")
    assert refused
    time.sleep(0.5)  # b stopped renewing: its lease lapsed
    assert first.owner("s1") is None
    assert first.acquire("s1", "a", 30)


def test_renew_keeps_leases_and_release_all_frees_them(store):
    for sid in ("s1", "s2"):
        store.create(sid, "gateway")
    for _ in range(5):  # again if the machine was so busy that the leases ran out first
        taken = time.monotonic()
        for sid in ("s1", "s2"):
            assert store.acquire(sid, "a", 0.4)
        time.sleep(0.2)
        store.renew("a", 30)
        if time.monotonic() - taken < 0.4:
            break
        store.release_all("a")
    time.sleep(0.3)
    assert not store.acquire("s1", "b", 30)
    store.release_all("a")
    assert store.acquire("s1", "b", 30)
    assert store.acquire("s2", "b", 30)


def test_acquiring_an_unknown_session_fails(store):
    with pytest.raises(UnknownSession):
        store.acquire("nope", "a", 30)


def test_questions_of_a_dead_owner_are_lost_then_taken_once(open_shared):
    live, other = open_shared(), open_shared()
    for sid in ("held", "orphan"):
        live.create(sid, "gateway")
    live.acquire("held", "a", 30)
    live.add_question(StoredQuestion("r1", "held", "Which?", ["x", "y"]))
    live.add_question(StoredQuestion("r2", "orphan", "Why?", None))
    lost = other.lose_questions()
    assert lost == [StoredQuestion("r2", "orphan", "Why?", None)]
    assert other.lose_questions() == []
    assert other.take_lost_questions("orphan") == lost
    assert other.take_lost_questions("orphan") == []
    named = other.lose_questions(["r1"])
    assert named == [StoredQuestion("r1", "held", "Which?", ["x", "y"])]
    assert live.take_lost_questions("held") == named


def test_removed_and_deleted_questions_are_gone(store):
    store.create("s1", "gateway")
    store.add_question(StoredQuestion("r1", "s1", "Which?", None))
    assert store.pending_questions("s1") == [StoredQuestion("r1", "s1", "Which?", None)]
    store.remove_question("r1")
    assert store.pending_questions("s1") == []
    assert store.lose_questions() == []
    store.add_question(StoredQuestion("r2", "s1", "Which?", None))
    store.delete("s1")
    assert store.lose_questions() == []


def test_a_second_process_sees_what_the_first_saved(open_shared):
    first, second = open_shared(), open_shared()
    first.create("s1", "gateway")
    first.acquire("s1", "a", 30)
    first.save("s1", _msgs("hello"), owner="a")
    assert second.load("s1").history == _msgs("hello")
    assert second.version("s1") == first.version("s1")


def test_the_postgres_schema_is_versioned_and_migrated_once(postgres_url):
    from neta.hosting.store.postgres import SCHEMA_VERSION, PostgresStore

    first = PostgresStore(postgres_url)
    second = PostgresStore(postgres_url)  # a second worker starting on the same database
    try:
        assert first.schema_version() == second.schema_version() == SCHEMA_VERSION
    finally:
        first.close()
        second.close()


def test_a_newer_postgres_schema_is_refused_clearly(postgres_url):
    import psycopg

    from neta.hosting.store.postgres import SCHEMA_VERSION, PostgresStore

    PostgresStore(postgres_url).close()
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute("INSERT INTO neta_schema VALUES (%s)", (SCHEMA_VERSION + 1,))
    with pytest.raises(StorageUnavailable, match="newer than this Neta"):
        PostgresStore(postgres_url)


def test_an_unreachable_database_is_storage_unavailable_without_the_password():
    from neta.hosting.store.postgres import PostgresStore

    url = f"postgresql://neta:s3cret@127.0.0.1:{free_port()}/x"
    with pytest.raises(StorageUnavailable) as caught:
        PostgresStore(url, timeout=1)
    assert "s3cret" not in str(caught.value)


def test_sessions_saved_last_before_the_ttl_and_leased_by_nobody_are_deleted(store):
    for name in ("old", "leased", "fresh"):
        store.create(name, "service")
    assert store.acquire("leased", "someone", 60)
    time.sleep(0.3)
    store.create("new", "service")
    assert store.acquire("fresh", "me", 60)
    store.save("fresh", _msgs("hello"), owner="me")  # saved now: not idle
    store.release("fresh", "me")
    assert store.delete_idle(0.2) == ["old"]
    assert sorted(name for name in ("old", "leased", "fresh", "new") if store.exists(name)) == [
        "fresh",
        "leased",
        "new",
    ]
    assert asyncio.run(store.run_calls().delete_idle(0.2)) == []
