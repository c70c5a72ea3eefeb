"""The loop, driven by the scripted provider and the kit plugin's misbehaving tools."""

import asyncio
import time

import pytest

import neta
from neta.events import RunFinished, TextDelta, ToolCallStart, ToolResultEvent
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from tests.core.runtime import kit


def call(name, arguments=None, **kw):
    return {"name": name, "arguments": {} if arguments is None else arguments, **kw}


def agent_for(tmp_path, turns, **options):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    provider = ScriptedProvider(turns)
    return Agent(
        permissions="auto", provider=provider, plugin_manager=pm, workspace=tmp_path, **options
    ), provider


def tool_results(result):
    return [e for e in result.events if isinstance(e, ToolResultEvent)]


def test_run_without_tool_calls_completes_with_the_text_streamed(tmp_path):
    agent, _ = agent_for(tmp_path, [{"text": "All good here."}])
    result = asyncio.run(agent.run("hi"))
    assert result.outcome == "completed"
    assert result.text == "All good here."
    deltas = "".join(e.text for e in result.events if isinstance(e, TextDelta))
    assert deltas == "All good here."
    assert next(e.type for e in result.events) == "run_started"
    assert result.events[-1] == RunFinished(
        session_id=result.session_id, outcome="completed", text="All good here.", turns=1
    )


def test_tool_result_is_fed_back_and_the_model_sees_it(tmp_path):
    agent, provider = agent_for(
        tmp_path,
        [
            {"tool_calls": [call("echo", {"text": "ping"})]},
            {"text": "got it", "expect": {"last_message_contains": "echo: ping"}},
        ],
    )
    result = asyncio.run(agent.run("go"))
    assert result.outcome == "completed", result.reason
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert result.messages[2].content == "echo: ping"
    assert provider.remaining == 0


def test_unknown_tool_becomes_an_error_listing_valid_names(tmp_path):
    agent, _ = agent_for(tmp_path, [{"tool_calls": [call("ecko", {"text": "x"})]}, {"text": "ok"}])
    result = asyncio.run(agent.run("go"))
    [event] = tool_results(result)
    assert event.is_error
    assert "unknown tool 'ecko'" in event.content
    assert "Did you mean 'echo'?" in event.content
    assert "Available tools: echo, sleepy" in event.content
    assert result.outcome == "completed"


def test_arguments_that_are_not_json_become_an_error_and_the_model_recovers(tmp_path):
    agent, _ = agent_for(
        tmp_path,
        [
            {"tool_calls": [call("echo", '{"text": "unterminated')]},
            {"tool_calls": [call("echo", {"text": "fixed"})]},
            {"text": "recovered"},
        ],
    )
    result = asyncio.run(agent.run("go"))
    first, second = tool_results(result)
    assert first.is_error
    assert "are not valid JSON" in first.content
    assert second.content == "echo: fixed"
    assert result.outcome == "completed"


def test_invalid_arguments_show_the_pydantic_message(tmp_path):
    agent, _ = agent_for(tmp_path, [{"tool_calls": [call("echo", {"text": ""})]}, {"text": "ok"}])
    [event] = tool_results(asyncio.run(agent.run("go")))
    assert event.content.startswith("Error: invalid arguments for 'echo': text: String should have")


def test_arguments_must_be_an_object(tmp_path):
    agent, _ = agent_for(tmp_path, [{"tool_calls": [call("echo", "[1, 2]")]}, {"text": "ok"}])
    [event] = tool_results(asyncio.run(agent.run("go")))
    assert "must be a JSON object, not list" in event.content


def test_null_for_an_optional_argument_uses_its_default(tmp_path):
    agent, _ = agent_for(
        tmp_path,
        [{"tool_calls": [call("sleepy", {"seconds": None, "label": None})]}, {"text": "ok"}],
    )
    [event] = tool_results(asyncio.run(agent.run("go")))
    assert event.content == "slept 0.2"


def test_tool_that_raises_becomes_an_error_result(tmp_path):
    agent, _ = agent_for(tmp_path, [{"tool_calls": [call("boom"), call("refuse")]}, {"text": "ok"}])
    boom, refuse = tool_results(asyncio.run(agent.run("go")))
    assert boom.content == "Error: tool 'boom' failed: RuntimeError: kaboom"
    assert refuse.content == "Error: this is what the model reads"


def test_tool_exceeding_its_own_timeout_is_stopped(tmp_path):
    agent, _ = agent_for(
        tmp_path, [{"tool_calls": [call("quick", {"seconds": 5, "label": "q"})]}, {"text": "ok"}]
    )
    kit.LOG.clear()
    [event] = tool_results(asyncio.run(agent.run("go")))
    assert event.content == "Error: tool 'quick' timed out after 0.2 s and was stopped"
    assert "cancelled q" in kit.LOG  # stopped, not waited out
    assert "end q" not in kit.LOG


def test_default_tool_timeout_applies_to_tools_without_their_own(tmp_path):
    agent, _ = agent_for(
        tmp_path,
        [{"tool_calls": [call("sleepy", {"seconds": 5})]}, {"text": "ok"}],
        tool_timeout=0.1,
    )
    [event] = tool_results(asyncio.run(agent.run("go")))
    assert "timed out after 0.1 s" in event.content


def test_agent_keywords_build_its_run_limits(tmp_path):
    agent, _ = agent_for(tmp_path, [], max_turns=3, tool_timeout=0.5, strict_schemas=True)
    assert agent.limits == neta.RunLimits(max_turns=3, tool_timeout=0.5, strict_schemas=True)
    assert agent.tool_timeout == 0.5


def test_agent_limits_win_over_the_separate_keywords(tmp_path):
    agent, _ = agent_for(
        tmp_path,
        [{"tool_calls": [call("sleepy", {"seconds": 5})]}, {"text": "ok"}],
        tool_timeout=30.0,
        limits=neta.RunLimits(tool_timeout=0.1),
    )
    [event] = tool_results(asyncio.run(agent.run("go")))
    assert "timed out after 0.1 s" in event.content


def test_independent_calls_run_concurrently_and_sequential_ones_alone(tmp_path):
    kit.LOG.clear()
    calls = [
        call("sleepy", {"seconds": 0.3, "label": "a"}),
        call("sleepy", {"seconds": 0.3, "label": "b"}),
        call("serial", {"seconds": 0.05, "label": "s"}),
        call("sleepy", {"seconds": 0.05, "label": "c"}),
    ]
    agent, _ = agent_for(tmp_path, [{"tool_calls": calls}, {"text": "ok"}])
    result = asyncio.run(agent.run("go"))
    assert kit.LOG[:2] == ["start a", "start b"]
    assert kit.LOG.index("start b") < kit.LOG.index("end a")  # a and b overlapped
    assert kit.LOG.index("start s") > max(kit.LOG.index("end a"), kit.LOG.index("end b"))
    assert kit.LOG.index("start c") > kit.LOG.index("end s")
    assert [e.call_id for e in tool_results(result)] == [
        "call_1_1",
        "call_1_2",
        "call_1_3",
        "call_1_4",
    ]


def test_max_turns_ends_the_run_with_a_clear_reason(tmp_path):
    turns = [{"tool_calls": [call("echo", {"text": str(i)})]} for i in range(5)]
    agent, _ = agent_for(tmp_path, turns, max_turns=3)
    result = asyncio.run(agent.run("go"))
    assert result.outcome == "max_turns"
    assert result.reason == "stopped after 3 turns without a final answer"
    assert result.turns == 3


def test_tool_ending_the_turn_stops_with_awaiting_input(tmp_path):
    agent, provider = agent_for(tmp_path, [{"tool_calls": [call("ask")]}, {"text": "never"}])
    result = asyncio.run(agent.run("go"))
    assert result.outcome == "awaiting_input"
    assert result.text == "[question] which one?"
    assert provider.remaining == 1


def test_long_output_is_truncated_keeping_head_and_tail(tmp_path):
    agent, _ = agent_for(
        tmp_path, [{"tool_calls": [call("flood")]}, {"text": "ok"}], output_limit=600
    )
    [event] = tool_results(asyncio.run(agent.run("go")))
    assert event.content.startswith("A" * 100)
    assert event.content.endswith("Z" * 100)
    assert "MIDDLE" not in event.content
    assert "characters omitted" in event.content
    assert len(event.content) < 700


def test_usage_is_summed_over_turns(tmp_path):
    agent, _ = agent_for(
        tmp_path,
        [
            {
                "tool_calls": [call("echo", {"text": "a"})],
                "usage": {"input_tokens": 10, "output_tokens": 2},
            },
            {"text": "ok", "usage": {"input_tokens": 15, "output_tokens": 3}},
        ],
    )
    result = asyncio.run(agent.run("go"))
    assert (result.usage.input_tokens, result.usage.output_tokens) == (25, 5)


def test_provider_error_ends_the_run_with_outcome_error(tmp_path):
    agent, _ = agent_for(tmp_path, [{"error": {"message": "upstream exploded"}}])
    result = asyncio.run(agent.run("go"))
    assert result.outcome == "error"
    assert result.reason == "upstream exploded"


def test_cancelling_the_run_cancels_running_tools(tmp_path):
    kit.LOG.clear()
    agent, _ = agent_for(
        tmp_path,
        [{"tool_calls": [call("sleepy", {"seconds": 30, "label": "long"})]}, {"text": "x"}],
    )
    events = []

    async def scenario():
        task = asyncio.create_task(agent.run("go", on_event=events.append))
        while "start long" not in kit.LOG:  # the tool itself is running
            await asyncio.sleep(0.01)
        assert any(isinstance(e, ToolCallStart) for e in events)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(scenario(), 5))
    assert kit.LOG == ["start long", "cancelled long"]
    assert events[-1].outcome == "cancelled"


def test_session_history_carries_over_between_runs(tmp_path):
    agent, provider = agent_for(
        tmp_path,
        [{"text": "first"}, {"text": "second", "expect": {"last_message_contains": "again"}}],
    )
    session = agent.new_session()
    asyncio.run(agent.run("hello", session=session))
    result = asyncio.run(agent.run("again", session=session))
    assert [m.content for m in result.messages] == ["hello", "first", "again", "second"]
    assert len(provider.received[1].messages) == 4  # system + the three before


def test_plain_function_tool_exceeding_its_timeout_is_abandoned_and_the_run_goes_on(tmp_path):
    kit.LOG.clear()
    arguments = {"seconds": 1.5, "label": "abandoned"}
    agent, _ = agent_for(tmp_path, [{"tool_calls": [call("blocking", arguments)]}, {"text": "ok"}])
    result = asyncio.run(agent.run("go"))
    assert "end abandoned" not in kit.LOG  # the run went on without waiting for the thread
    [event] = tool_results(result)
    assert event.content == "Error: tool 'blocking' timed out after 0.3 s and was stopped"
    assert result.outcome == "completed"
    while "end abandoned" not in kit.LOG:  # the thread finishes on its own (and must not
        time.sleep(0.05)  # write into another test's log)


def test_plain_function_tool_runs_beside_async_tools_but_never_beside_another(tmp_path):
    kit.LOG.clear()
    calls = [
        call("blocking", {"seconds": 0.2, "label": "b1"}),
        call("sleepy", {"seconds": 0.6, "label": "s"}),
        call("blocking", {"seconds": 0.1, "label": "b2"}),
    ]
    agent, _ = agent_for(tmp_path, [{"tool_calls": calls}, {"text": "ok"}])
    asyncio.run(agent.run("go"))
    assert kit.LOG.index("end b2") < kit.LOG.index("end s")  # s slept beside both
    assert kit.LOG.index("start b2") > kit.LOG.index("end b1")
    assert kit.LOG.index("start s") < kit.LOG.index("end b1")


def test_event_from_a_plain_function_tool_reaches_the_callback_on_the_loop_thread_in_order(
    tmp_path,
):
    import threading

    kit.THREADS.clear()
    agent, _ = agent_for(tmp_path, [{"tool_calls": [call("plans")]}, {"text": "ok"}])
    seen = []
    result = asyncio.run(
        agent.run("go", on_event=lambda e: seen.append((e.type, threading.get_ident())))
    )
    assert result.outcome == "completed"
    types = [t for t, _ in seen]
    assert types[types.index("tool_call_start") :][:4] == [
        "tool_call_start",
        "permission_decision",  # the gate let it run
        "todo_update",
        "tool_result",
    ]
    assert {ident for _, ident in seen} == {threading.get_ident()}
    assert kit.THREADS
    assert threading.get_ident() not in kit.THREADS  # the tool itself ran in a worker thread


def test_callback_that_raises_neither_breaks_the_run_nor_loses_events(tmp_path, caplog):
    def fragile(event):
        raise RuntimeError(f"renderer broke on {event.type}")

    agent, _ = agent_for(
        tmp_path,
        [{"tool_calls": [call("echo", {"text": "a"}), call("plans")]}, {"text": "done"}],
    )
    result = asyncio.run(agent.run("go", on_event=fragile))
    assert result.outcome == "completed"
    assert [e.content for e in tool_results(result)] == ["echo: a", "planned"]
    assert result.events[-1].type == "run_finished"
    assert "todo_update" in [e.type for e in result.events]
    failures = [r for r in caplog.records if "on_event" in r.getMessage()]
    assert len(failures) == 1  # reported once, not once per event
    assert "renderer broke on run_started" in str(failures[0].exc_info[1])


def test_async_callback_is_refused_with_a_clear_error(tmp_path):
    async def listener(event):
        pass

    agent, _ = agent_for(tmp_path, [{"text": "never"}])
    with pytest.raises(neta.ConfigError, match="on_event must be a plain function"):
        asyncio.run(agent.run("go", on_event=listener))


def test_tool_calling_sys_exit_becomes_an_error_result(tmp_path):
    agent, _ = agent_for(tmp_path, [{"tool_calls": [call("quits")]}, {"text": "ok"}])
    result = asyncio.run(agent.run("go"))
    [event] = tool_results(result)
    assert event.content == "Error: tool 'quits' failed: SystemExit: 4"
    assert result.outcome == "completed"


def test_strict_mode_nulls_inside_nested_objects_take_their_defaults(tmp_path):
    arguments = {"items": [{"id": "a", "note": None}, {"id": "b", "note": "x"}], "first": None}
    agent, _ = agent_for(tmp_path, [{"tool_calls": [call("nested", arguments)]}, {"text": "ok"}])
    [event] = tool_results(asyncio.run(agent.run("go")))
    assert event.content == "a=none b=x first=-"


def test_null_for_a_required_argument_is_a_validation_error(tmp_path):
    agent, _ = agent_for(
        tmp_path, [{"tool_calls": [call("nested", {"items": None})]}, {"text": "ok"}]
    )
    [event] = tool_results(asyncio.run(agent.run("go")))
    assert event.content.startswith("Error: invalid arguments for 'nested': items: Input should be")


def test_reply_cut_off_at_the_output_limit_completes_saying_so(tmp_path):
    agent, _ = agent_for(tmp_path, [{"text": "The answer is", "finish_reason": "length"}])
    result = asyncio.run(agent.run("go"))
    assert result.outcome == "completed"
    assert result.reason == "the reply was cut off at the model's output token limit"
    assert result.events[-1].reason == result.reason


def test_tool_call_cut_off_at_the_output_limit_tells_the_model_why_its_json_broke(tmp_path):
    agent, _ = agent_for(
        tmp_path,
        [
            {"tool_calls": [call("echo", '{"text": "a very long')], "finish_reason": "length"},
            {"text": "ok"},
        ],
    )
    [event] = tool_results(asyncio.run(agent.run("go")))
    assert "are not valid JSON" in event.content
    assert "cut off at the model's output token limit" in event.content
    assert "smaller" in event.content


class _BuggyProvider:
    async def complete(self, request, on_text):
        on_text("partial ")
        raise RuntimeError("bug in a plugin's provider")


def test_provider_failing_unexpectedly_still_ends_the_event_stream(tmp_path):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    agent = Agent(
        permissions="auto", provider=_BuggyProvider(), plugin_manager=pm, workspace=tmp_path
    )
    events = []
    with pytest.raises(RuntimeError, match="bug in a plugin's provider"):
        asyncio.run(agent.run("go", on_event=events.append))
    assert events[-1].type == "run_finished"
    assert events[-1].outcome == "error"
    assert "RuntimeError: bug in a plugin's provider" in events[-1].reason


def test_cancelled_tool_calls_get_a_result_event_so_no_call_is_left_open(tmp_path):
    agent, _ = agent_for(
        tmp_path,
        [
            {
                "tool_calls": [
                    call("sleepy", {"seconds": 30, "label": "x"}),
                    call("echo", {"text": "y"}),
                ]
            }
        ],
    )
    events = []

    async def scenario():
        task = asyncio.create_task(agent.run("go", on_event=events.append))
        while not any(isinstance(e, ToolResultEvent) for e in events):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(scenario(), 5))
    started = {e.call_id for e in events if isinstance(e, ToolCallStart)}
    finished = {e.call_id: e for e in events if isinstance(e, ToolResultEvent)}
    assert set(finished) == started
    assert finished["call_1_1"].is_error
    assert finished["call_1_1"].content == "Error: the run was cancelled while this tool ran"
    assert events[-1].type == "run_finished"
    assert events[-1].outcome == "cancelled"


@pytest.mark.parametrize("count", [1, 3])
def test_cancelling_waits_for_every_running_call_before_the_run_finishes(tmp_path, count):
    calls = [
        call("sleepy", {"seconds": 30, "label": f"c{n}", "linger": 0.02 + 0.15 * n})
        for n in range(count)  # the first is cleaned up well before the others
    ]
    agent, _ = agent_for(tmp_path, [{"tool_calls": calls}])
    kit.LOG.clear()
    events = []
    log_at_end = []

    def on_event(event):
        events.append(event)
        if isinstance(event, RunFinished):
            log_at_end.extend(kit.LOG)

    async def scenario():
        async with asyncio.timeout(5):
            task = asyncio.create_task(agent.run("go", on_event=on_event))
            while len(kit.LOG) < count:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return asyncio.all_tasks() - {asyncio.current_task()}

    assert asyncio.run(scenario()) == set()
    assert sorted(log_at_end) == sorted(
        f"{what} c{n}" for n in range(count) for what in ("start", "cancelled", "cleaned up")
    )
    assert [e.type for e in events[-count - 1 :]] == ["tool_result"] * count + ["run_finished"]


def test_tool_result_without_text_content_becomes_an_error_result(tmp_path):
    agent, _ = agent_for(tmp_path, [{"tool_calls": [call("malformed")]}, {"text": "ok"}])
    result = asyncio.run(agent.run("go"))
    [event] = tool_results(result)
    assert event.content == (
        "Error: tool 'malformed' failed: TypeError: tool 'malformed' returned a ToolResult "
        "whose content is NoneType; expected str"
    )
    assert result.outcome == "completed"


def test_calls_after_a_sequential_call_that_ends_the_turn_are_not_run(tmp_path):
    kit.LOG.clear()
    calls = [call("ask_alone"), call("sleepy", {"seconds": 0.01, "label": "late"})]
    agent, provider = agent_for(tmp_path, [{"tool_calls": calls}, {"text": "never"}])
    result = asyncio.run(agent.run("go"))
    assert result.outcome == "awaiting_input"
    assert kit.LOG == []
    asked, skipped = tool_results(result)
    assert asked.content == "[question] which one?"
    assert skipped.is_error
    assert skipped.content.startswith("Error: not run: 'ask_alone' ended the turn")
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "tool"]
    assert provider.remaining == 1


def test_a_session_that_fails_to_build_is_ended_for_the_plugins(tmp_path):
    seen = []

    class Lifecycle:
        @neta.hookimpl
        def neta_session_start(self, session):
            seen.append(("start", session.session_id))

        @neta.hookimpl
        def neta_session_end(self, session):
            seen.append(("end", session.session_id))

    pm = neta.create_plugin_manager(
        load_entrypoints=False, plugins=[("kit", kit), ("lifecycle", Lifecycle())]
    )
    agent = Agent(
        permissions="auto", provider=ScriptedProvider([]), plugin_manager=pm, workspace=tmp_path
    )
    with pytest.raises(neta.ConfigError, match="no_such_toolset"):  # the agent's were checked
        agent.new_session(session_id="s1", toolsets=["no_such_toolset"])
    assert seen == [("start", "s1"), ("end", "s1")]
