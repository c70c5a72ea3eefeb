"""The session hub in-process: races, persistence moments and memory, driven step by step."""

import asyncio
import gc
import tracemalloc

import pytest

from neta.errors import AnswerRefused, StorageUnavailable, UnknownSession
from neta.hosting.config import HostConfig
from neta.hosting.hub import SessionHub
from neta.hosting.questions import QuestionRegistry
from neta.hosting.store.sqlite import SqliteStore
from neta.providers.scripted import ScriptedProvider
from tests.core.hosting.server_harness import ASK, builtin_pm

PLAN = {
    "tool_calls": [
        {
            "name": "todo",
            "arguments": {"todos": [{"id": "1", "content": "Paint", "status": "in_progress"}]},
        }
    ]
}


class Frames:
    """An outbox that keeps what it is sent."""

    def __init__(self):
        self.frames = []
        self.closed = None

    def put(self, frame):
        self.frames.append(frame)

    def close(self, code, reason):
        self.closed = (code, reason)

    def of(self, kind):
        return [f["data"] for f in self.frames if f["type"] == kind]

    async def until(self, kind, timeout=5):
        deadline = asyncio.get_running_loop().time() + timeout
        while not self.of(kind):
            assert asyncio.get_running_loop().time() < deadline, f"no {kind} frame"
            await asyncio.sleep(0.005)
        return self.of(kind)[-1]


@pytest.fixture
def hub_for(tmp_path):
    """Build hubs on one home; call inside the event loop that drives them."""

    def build(turns, **options):
        options.setdefault("provider_factory", lambda: ScriptedProvider(turns))
        return SessionHub(
            HostConfig(
                home=tmp_path / "home",
                workspace=tmp_path,
                plugin_manager=builtin_pm(),
                **options,
            )
        )

    return build


def test_answer_arriving_while_the_run_is_cancelled_is_expired_not_swallowed(hub_for):
    async def scenario():
        hub = hub_for([ASK, {"text": "never"}])
        live = await hub.create("gateway")
        out = Frames()
        live.outboxes.add(out)
        hub.start_run(live, "go")
        request_id = (await out.until("clarify_request"))["requestId"]
        stopping = asyncio.create_task(hub.cancel_run(live))
        await asyncio.sleep(0)  # the run is told to stop but has not unwound yet
        with pytest.raises(AnswerRefused) as refused:
            hub.answer(live, request_id, "red")
        assert refused.value.code == "expired"
        await stopping
        assert [r["outcome"] for r in out.of("clarify_resolved")] == ["cancelled"]
        assert len(hub.questions) == 0
        await hub.shutdown()

    asyncio.run(scenario())


def test_answer_landing_as_the_question_times_out_wins_and_is_announced_once(hub_for):
    async def scenario():
        hub = hub_for(
            [ASK, {"text": "ok", "expect": {"last_message_contains": "red"}}], clarify_timeout=0.05
        )
        live = await hub.create("gateway")
        out = Frames()
        live.outboxes.add(out)
        close = hub.questions.close

        def answered_just_before(asked, state):
            # the answer was read off the socket in the same instant the timer fired
            if state == "timed_out" and asked.state == "pending":
                hub.answer(live, asked.request_id, "red")
            return close(asked, state)

        hub.questions.close = answered_just_before
        hub.start_run(live, "go")
        finished = await out.until("run_finished")
        assert finished["outcome"] == "completed", finished["reason"]
        assert [r["outcome"] for r in out.of("clarify_resolved")] == ["answered"]
        assert out.of("tool_result")[0]["content"] == "User answered: red"
        await hub.shutdown()

    asyncio.run(scenario())


def test_user_message_tool_calls_and_todos_are_on_disk_while_the_run_is_still_going(
    hub_for, tmp_path
):
    async def scenario():
        hub = hub_for([PLAN, {"text": "late", "delay": 30}])
        live = await hub.create("service")
        out = Frames()
        live.outboxes.add(out)
        hub.start_run(live, "paint the fence")
        await out.until("tool_result")
        # the model is now thinking about its next turn; what would a crash leave on disk?
        other = SqliteStore(tmp_path / "home" / "neta.db")
        deadline = asyncio.get_running_loop().time() + 2
        while len((saved := other.load(live.session.session_id)).history) < 3:
            if asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(0.01)
        other.close()
        assert [m.role for m in saved.history] == ["user", "assistant", "tool"]
        assert saved.history[0].content == "paint the fence"
        assert '"Paint"' in saved.todos
        await hub.shutdown()

    asyncio.run(scenario())


def test_saving_rewrites_only_what_changed(hub_for):
    async def scenario():
        hub = hub_for([{"text": "one"}, {"text": "two"}])
        live = await hub.create("service")
        await hub.start_run(live, "first")
        written = []
        save = hub.store.save

        def spy(session_id, messages, **kwargs):
            written.append((kwargs.get("start", 0), [m.content for m in messages]))
            save(session_id, messages, **kwargs)

        hub.store.save = spy
        await hub.start_run(live, "second")
        # the run's mark (nothing else changed), then only the new message
        assert written[:2] == [(2, []), (2, ["second"])]
        assert hub.store.load(live.session_id).history == live.session.history
        await hub.shutdown()

    asyncio.run(scenario())


def test_idle_sessions_are_dropped_from_memory_but_never_while_running_or_connected(hub_for):
    async def scenario():
        hub = hub_for([{"text": "slow", "delay": 0.2}], max_idle_sessions=0)
        connected = await hub.create("gateway")
        out = Frames()
        hub.attach(connected, out)
        running = await hub.create("service")
        run = hub.start_run(running, "hi")
        idle = await hub.create("service")
        hub.release(idle)
        assert set(hub._live) == {connected.session_id, running.session_id}
        await run
        await asyncio.sleep(0)  # the run's done callback
        assert set(hub._live) == {connected.session_id}
        hub.detach(connected, out)
        assert hub._live == {}
        again = await hub.get(running.session_id)
        assert [m.content for m in again.session.history] == ["hi", "slow"]
        with pytest.raises(UnknownSession):
            hub.start_run(running, "the dropped copy must not run")
        await hub.shutdown()

    asyncio.run(scenario())


def test_question_that_cannot_be_saved_stops_the_run_and_leaves_nothing_pending(hub_for):
    async def scenario():
        model = ScriptedProvider([ASK, {"text": "asked nobody"}])
        hub = hub_for([], provider_factory=lambda: model)
        live = await hub.create("gateway")
        out = Frames()
        live.outboxes.add(out)

        def disk_full(question):
            raise StorageUnavailable("the session store cannot write: database or disk is full")

        hub.store.add_question = disk_full
        result = await hub.start_run(live, "go")
        assert result.outcome == "error"
        assert model.remaining == 1  # the model never read a tool error about it
        assert out.of("error")[0]["code"] == "storage_unavailable"
        assert out.of("run_finished")[-1]["outcome"] == "error"
        assert out.of("clarify_request") == out.of("clarify_resolved") == []
        assert len(hub.questions) == 0
        await hub.shutdown()

    asyncio.run(scenario())


def test_closed_questions_keep_neither_their_text_nor_their_answer():
    async def scenario():
        registry = QuestionRegistry()
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for n in range(40):
            asked = registry.ask("s1", "Which colour?" + " really" * 1000, None)
            registry.answer(asked.request_id, "s1", f"{n} " + "blue " * 20_000)
        request_id = asked.request_id
        del asked
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        assert kept < 200_000, f"{kept} bytes kept for 40 closed questions"
        with pytest.raises(AnswerRefused) as refused:
            registry.answer(request_id, "s1", "red")
        assert refused.value.code == "already_resolved"
        assert registry.remembered() == 40

    asyncio.run(scenario())


def test_another_sessions_question_pending_or_closed_is_refused_as_an_unknown_id():
    async def scenario():
        registry = QuestionRegistry()
        pending = registry.ask("s1", "Which?", None)
        closed = registry.ask("s1", "And?", None)
        registry.answer(closed.request_id, "s1", "red")
        for request_id in (pending.request_id, closed.request_id, "made-up"):
            with pytest.raises(AnswerRefused) as refused:
                registry.answer(request_id, "s2", "blue")
            assert (refused.value.code, str(refused.value)) == (
                "unknown_request",
                f"no question has id {request_id!r}",
            )
        assert registry.pending_for("s1") == [pending]

    asyncio.run(scenario())


def test_answer_to_a_question_whose_asker_was_just_cancelled_is_expired():
    async def scenario():
        registry = QuestionRegistry()
        asked = registry.ask("s1", "Which?", None)
        asked.future.cancel()  # its task was cancelled; the asker has not run since
        with pytest.raises(AnswerRefused) as refused:
            registry.answer(asked.request_id, "s1", "red")
        assert refused.value.code == "expired"
        assert len(registry) == 0

    asyncio.run(scenario())


def test_shutdown_ends_waiting_questions_as_server_restarted_and_leaves_no_task(hub_for):
    async def scenario():
        hub = hub_for([ASK, {"text": "never"}])
        live = await hub.create("gateway")
        out = Frames()
        live.outboxes.add(out)
        run = hub.start_run(live, "go")
        await out.until("clarify_request")
        await hub.shutdown()
        assert run.done()
        assert [r["outcome"] for r in out.of("clarify_resolved")] == ["server_restarted"]
        assert len(hub.questions) == 0
        assert hub._live == {}
        assert asyncio.all_tasks() == {asyncio.current_task()}

    asyncio.run(scenario())


def test_agent_options_reach_the_hosted_agent(tmp_path):
    from neta.hosting.config import HostConfig
    from neta.hosting.hub import SessionHub
    from neta.providers.scripted import ScriptedProvider
    from tests.core.hosting.server_harness import builtin_pm

    hub = SessionHub(
        HostConfig(
            provider_factory=lambda: ScriptedProvider([]),
            home=tmp_path / "home",
            workspace=tmp_path,
            plugin_manager=builtin_pm(),
            agent_options={"crew_depth": 0, "tool_timeout": 7.5},
        )
    )
    try:
        assert hub.agent.crew_depth == 0
        assert hub.agent.tool_timeout == 7.5
        assert asyncio.run(hub.create("service")).session.context.crew_runner is None
    finally:
        hub.store.close()
