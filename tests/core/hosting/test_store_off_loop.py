"""A store on a network (PostgreSQL) is never waited on in the host's event loop during a run.

While the database works (or waits on a lock), the worker's other sessions and connections go
on: a run's saves and questions go through the store's async run calls."""

from __future__ import annotations

import asyncio
from pathlib import Path

from neta.hosting.config import HostConfig
from neta.hosting.hub import SessionHub
from neta.providers.scripted import ScriptedProvider
from tests.core.hosting.server_harness import ASK, builtin_pm
from tests.core.hosting.table_locks import hold_table, until_waited_on


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
        held = hold_table(postgres_url, "messages")  # the run's saves wait for it
        run = hub.start_run(live, "hi")
        await until_waited_on(postgres_url, "messages")
        ran_while_held = not held.released.is_set()
        waited = not run.done()
        held.let_go()
        result = await asyncio.wait_for(run, 10)
        assert ran_while_held  # the event loop went on while the save waited
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
        held = hold_table(postgres_url, "pending_clarify")  # the answered question waits
        hub.answer(live, request_id, "blue")
        await until_waited_on(postgres_url, "pending_clarify")
        ran_while_held = not held.released.is_set()
        held.let_go()
        result = await asyncio.wait_for(run, 10)
        assert (result.outcome, result.text) == ("completed", "blue then")
        assert ran_while_held  # the event loop went on while the answered question waited
        assert hub.store.pending_questions(live.session_id) == []
        await hub.shutdown()

    asyncio.run(main())
