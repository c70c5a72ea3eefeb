"""Run calls of many sessions at once: each caller gets its own answer, whatever goes together.

A PostgreSQL store makes the calls of one kind that come together in one statement; SQLite
makes each alone. Both must answer every caller as if its call were alone.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from neta.errors import SessionOwned, UnknownSession
from neta.hosting.engines import open_store
from neta.hosting.store import Store, StoredQuestion
from neta.messages import Message


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    opened = open_store(tmp_path / "home", url)
    yield opened
    opened.close()


SESSIONS = [f"s{n}" for n in range(30)]


def _said(session_id: str, *texts: str) -> list[Message]:
    return [Message(role="user", content=f"{session_id}: {text}") for text in texts]


def test_saves_of_many_sessions_at_once_each_land_and_a_refused_one_fails_alone(store):
    async def main() -> None:
        calls = store.run_calls()
        try:
            for sid in SESSIONS:
                await calls.create(sid, "gateway")
            await asyncio.gather(*(calls.acquire(sid, "me", 60) for sid in SESSIONS[1:]))
            assert await calls.acquire(SESSIONS[0], "another", 60)
            outcomes = await asyncio.gather(
                *(calls.save(sid, _said(sid, "a", "b"), owner="me") for sid in SESSIONS),
                return_exceptions=True,
            )
            assert isinstance(outcomes[0], SessionOwned)
            assert all(isinstance(version, int) for version in outcomes[1:])
            # then each rewrites its history from its second message on, its todos too
            await asyncio.gather(
                *(
                    calls.save(sid, _said(sid, "B", "C"), owner="me", start=1, todos=f'["{sid}"]')
                    for sid in SESSIONS[1:]
                )
            )
            for sid in SESSIONS[1:]:
                saved = await calls.load(sid)
                assert saved is not None
                assert [m.content for m in saved.history] == [f"{sid}: {t}" for t in "aBC"]
                assert saved.todos == f'["{sid}"]'
            assert (await calls.load(SESSIONS[0])).history == []
        finally:
            await calls.close()

    asyncio.run(main())


def test_text_one_session_cannot_store_fails_its_save_alone(store):
    async def main() -> None:
        calls = store.run_calls()
        try:
            for sid in SESSIONS[:5]:
                await calls.create(sid, "gateway")
                await calls.acquire(sid, "me", 60)
            broken = '{"items": ["\ud800"]}'  # an unpaired surrogate: not valid Unicode
            outcomes = await asyncio.gather(
                *(
                    calls.save(sid, _said(sid, "x"), owner="me", todos=broken if n == 2 else None)
                    for n, sid in enumerate(SESSIONS[:5])
                ),
                return_exceptions=True,
            )
            assert isinstance(outcomes.pop(2), ValueError)  # as the SQLite store says it
            assert all(isinstance(version, int) for version in outcomes)
        finally:
            await calls.close()

    asyncio.run(main())


def test_questions_and_leases_of_many_sessions_at_once_are_each_kept_or_let_go(store):
    async def main() -> None:
        calls = store.run_calls()
        try:
            for sid in SESSIONS:
                await calls.create(sid, "gateway")
                await calls.acquire(sid, "me", 60)
            await asyncio.gather(
                *(
                    calls.add_question(StoredQuestion(f"r-{sid}", sid, f"{sid}?", ["y", "n"]))
                    for sid in SESSIONS
                )
            )
            for sid in SESSIONS:
                [asked] = await calls.pending_questions(sid)
                assert (asked.request_id, asked.question, asked.choices) == (
                    f"r-{sid}",
                    f"{sid}?",
                    ["y", "n"],
                )
            even = SESSIONS[::2]
            await asyncio.gather(*(calls.remove_question(f"r-{sid}") for sid in even))
            await asyncio.gather(*(calls.release(sid, "me") for sid in even))
            for sid in SESSIONS:
                left = [q.request_id for q in await calls.pending_questions(sid)]
                assert left == ([] if sid in even else [f"r-{sid}"])
                assert await calls.owner(sid) == (None if sid in even else "me")
        finally:
            await calls.close()

    asyncio.run(main())


def test_sessions_and_leases_taken_at_once_answer_each_caller_alone(store):
    async def main() -> None:
        calls = store.run_calls()
        try:
            await asyncio.gather(*(calls.create(sid, "gateway") for sid in SESSIONS))
            assert await calls.acquire(SESSIONS[0], "another", 60)
            asked = ["no-such-session", *SESSIONS]
            outcomes = await asyncio.gather(
                *(calls.acquire(sid, "me", 60) for sid in asked), return_exceptions=True
            )
            assert isinstance(outcomes[0], UnknownSession)
            assert outcomes[1:] == [False] + [True] * (len(SESSIONS) - 1)
            assert [await calls.owner(sid) for sid in SESSIONS[:2]] == ["another", "me"]
        finally:
            await calls.close()

    asyncio.run(main())


def test_batches_and_heartbeats_of_two_workers_at_once_never_deadlock(postgres_url, tmp_path):
    """Statements locking several lease rows lock them in one order: no two wait in a circle."""
    stores = [open_store(tmp_path / "home", postgres_url) for _ in range(2)]

    async def worker(calls, me: str, rounds: int) -> None:
        for n in range(rounds):
            wanted = random.sample(SESSIONS, 20)
            taken = await asyncio.gather(
                *(calls.acquire(sid, me, 60) for sid in wanted), calls.renew(me, 60)
            )
            held = [sid for sid, ok in zip(wanted, taken, strict=False) if ok]
            random.shuffle(held)
            await asyncio.gather(
                *(calls.save(sid, _said(sid, str(n)), owner=me) for sid in held[::2]),
                *(calls.release(sid, me) for sid in held[1::2]),
                calls.renew(me, 60),
            )
            await asyncio.gather(*(calls.release(sid, me) for sid in held[::2]))

    async def main() -> None:
        calls = [store.run_calls() for store in stores]
        try:
            await asyncio.gather(*(calls[0].create(sid, "gateway") for sid in SESSIONS))
            await asyncio.gather(worker(calls[0], "a", 40), worker(calls[1], "b", 40))
        finally:
            for each in calls:
                await each.close()

    try:
        asyncio.run(main())
    finally:
        for store in stores:
            store.close()
