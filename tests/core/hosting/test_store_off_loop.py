"""A store on a network (PostgreSQL) is never waited on in the host's event loop during a run.

While the database works (or waits on a lock), the worker's other sessions and connections go
on: a run's saves and questions go through the store's async run calls."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import psycopg

from neta.hosting.config import HostConfig
from neta.hosting.hub import SessionHub
from neta.providers.scripted import ScriptedProvider
from tests.core.hosting.server_harness import ASK, builtin_pm

HELD_SECONDS = 2.0


async def _largest_gap(seconds: float) -> float:
    """The longest the event loop went without running this task, over ``seconds``."""
    loop = asyncio.get_running_loop()
    largest, last, end = 0.0, loop.time(), loop.time() + seconds
    while loop.time() < end:
        await asyncio.sleep(0.01)
        now = loop.time()
        largest, last = max(largest, now - last), now
    return largest


def _hold_table(url: str, table: str) -> threading.Thread:
    """Lock ``table`` against writes for ``HELD_SECONDS`` (from another connection)."""
    locked = threading.Event()

    def hold() -> None:
        with psycopg.connect(url) as db:
            db.execute(f"LOCK TABLE {table} IN EXCLUSIVE MODE".encode())
            locked.set()
            threading.Event().wait(HELD_SECONDS)
            db.rollback()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    assert locked.wait(10)
    return thread


def _hub(tmp_path: Path, url: str, turns: list[object]) -> SessionHub:
    return SessionHub(
        HostConfig(
            workspace=tmp_path,
            home=tmp_path / "home",
            database_url=url,
            provider_factory=lambda: ScriptedProvider(turns),
            plugin_manager=builtin_pm(),
        )
    )


def test_a_save_waiting_on_the_database_does_not_hold_up_the_event_loop(tmp_path, postgres_url):
    async def main() -> None:
        hub = _hub(tmp_path, postgres_url, [{"text": "done"}])
        await hub.start()
        live = await hub.create("service")
        holder = _hold_table(postgres_url, "messages")  # the run's saves wait for it
        run = hub.start_run(live, "hi")
        gap = await _largest_gap(HELD_SECONDS / 2)
        waited = not run.done()
        result = await asyncio.wait_for(run, 10)
        holder.join()
        assert gap < 0.5, f"the event loop stood still for {gap:.2f} s"
        assert waited  # the run waited for its save meanwhile
        assert result.outcome == "completed"
        assert [m.content for m in hub.store.load(live.session_id).history] == ["hi", "done"]
        await hub.shutdown()

    asyncio.run(main())


def test_a_question_saved_while_the_database_waits_does_not_hold_up_the_event_loop(
    tmp_path, postgres_url
):
    async def main() -> None:
        hub = _hub(tmp_path, postgres_url, [ASK, {"text": "blue then"}])
        await hub.start()
        live = await hub.create("gateway")
        run = hub.start_run(live, "pick")
        while not hub.pending_questions(live.session_id):
            await asyncio.sleep(0.01)
        request_id = hub.pending_questions(live.session_id)[0].request_id
        holder = _hold_table(postgres_url, "pending_clarify")  # the answered question waits
        hub.answer(live, request_id, "blue")
        gap = await _largest_gap(HELD_SECONDS / 2)
        result = await asyncio.wait_for(run, 10)
        holder.join()
        assert (result.outcome, result.text) == ("completed", "blue then")
        assert gap < 0.5, f"the event loop stood still for {gap:.2f} s"
        assert hub.store.pending_questions(live.session_id) == []
        await hub.shutdown()

    asyncio.run(main())
