"""The crew in a host: child events reach the parent session's clients, cancelling stops all."""

import asyncio

from neta.hosting.hub import HostConfig, SessionHub
from tests.plugins.crew.crew_kit import Router, call, crew_pm, ended_sessions, turn, wait_log


class Frames:
    """A client outbox that keeps every frame it is sent."""

    def __init__(self):
        self.frames = []

    def put(self, frame):
        self.frames.append(frame)

    def close(self, code, reason):
        pass

    async def until(self, test):
        while not any(test(f) for f in self.frames):
            await asyncio.sleep(0.005)


def hub_with(tmp_path, router, **options):
    config = HostConfig(
        provider_factory=lambda: router,
        home=tmp_path / "home",
        workspace=tmp_path,
        plugin_manager=crew_pm(),
        **options,
    )
    return SessionHub(config)


def test_hosted_child_events_reach_the_parents_clients_tagged_with_the_child(tmp_path):
    todos = [{"id": "1", "content": "look", "status": "in_progress"}]
    router = Router(
        [turn(call("delegate_task", goal="[kid] look")), {"text": "ok"}],
        kid=[turn(call("todo", todos=todos)), {"text": "Looked."}],
    )

    async def scenario():
        hub = hub_with(tmp_path, router, permissions="auto")
        live = await hub.create("gateway")
        out = Frames()
        hub.attach(live, out)
        result = await hub.start_run(live, "go")
        view = await hub.view(live.session_id)
        await hub.shutdown()
        return live.session_id, result, out.frames, view

    session_id, result, frames, view = asyncio.run(scenario())
    assert result.outcome == "completed", result.reason
    assert {f["sessionId"] for f in frames} == {session_id}
    [delegated] = [
        f["data"] for f in frames if f["type"] == "tool_result" and f["data"]["agent_id"] is None
    ]
    child_id = delegated["data"]["children"][0]["child_id"]
    from_child = [f for f in frames if f["data"].get("agent_id") == child_id]
    kinds = [f["type"] for f in from_child if f["type"] != "text_delta"]
    assert kinds == [
        "run_started",
        "tool_call_start",
        "permission_decision",
        "todo_update",
        "tool_result",
        "run_finished",
    ]
    assert view.todos == []  # the child's list is not the session's
    assert ended_sessions == [child_id, session_id]  # the child at once, the parent at shutdown


def test_hosted_run_cancelled_during_a_delegation_stops_and_ends_the_child(tmp_path):
    router = Router(
        [turn(call("delegate_task", goal="[kid] wait", toolsets=["slow"])), {"text": "never"}],
        kid=[turn(call("wait", seconds=30, label="kid")), {"text": "never"}],
    )

    async def scenario():
        hub = hub_with(tmp_path, router, toolsets=["slow"], permissions="auto")
        live = await hub.create("gateway")
        out = Frames()
        hub.attach(live, out)
        run = hub.start_run(live, "go")
        waiting = out.until(
            lambda f: f["type"] == "tool_call_start" and f["data"]["name"] == "wait"
        )
        await asyncio.wait_for(waiting, 5)
        assert await hub.cancel_run(live)
        result = await run
        await hub.shutdown()
        return live.session_id, result, out.frames

    session_id, result, frames = asyncio.run(scenario())
    assert result.outcome == "cancelled"
    assert wait_log == ["start kid", "cancelled kid"]
    finished = [f["data"] for f in frames if f["type"] == "run_finished"]
    assert [f["outcome"] for f in finished] == ["cancelled", "cancelled"]
    assert finished[-1]["agent_id"] is None
    assert ended_sessions == [finished[0]["agent_id"], session_id]
