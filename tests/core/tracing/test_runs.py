"""A run's spans through the scripted provider: the run, each model call and each tool call."""

import asyncio
import contextlib
import json

import pytest
from opentelemetry.trace import SpanKind, StatusCode

import neta
import neta.tracing
from neta.providers.retry import RetryPolicy
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from tests.core.runtime import kit
from tests.core.tracing.spans_kit import (
    attrs,
    children,
    content_keys,
    event,
    event_names,
    failed,
    in_memory_provider,
    named,
    one,
)


def call(name, arguments=None, **kw):
    return {"name": name, "arguments": {} if arguments is None else arguments, **kw}


def agent_for(tmp_path, turns, **options):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    options.setdefault("retry", RetryPolicy(max_tries=1))
    return Agent(
        permissions="auto",
        provider=ScriptedProvider(turns),
        plugin_manager=pm,
        workspace=tmp_path,
        **options,
    )


ECHO_RUN = [
    {
        "text": "Echoing.",
        "tool_calls": [call("echo", {"text": "secret ping"})],
        "usage": {"input_tokens": 120, "output_tokens": 7},
        "finish_reason": "tool_calls",
    },
    {"text": "Done: secret pong.", "usage": {"input_tokens": 150, "output_tokens": 5}},
]


def test_a_run_is_one_invoke_agent_span_over_its_chat_and_tool_spans(tmp_path, spans):
    agent = agent_for(tmp_path, ECHO_RUN, model="tiny", name="helper")
    result = asyncio.run(agent.run("go"))
    assert result.outcome == "completed", result.reason
    run = one(spans, "invoke_agent")
    assert run.name == "invoke_agent helper"
    assert run.kind == SpanKind.INTERNAL
    assert run.parent is None
    assert [s.name for s in children(spans, run)] == ["chat tiny", "execute_tool echo", "chat tiny"]
    assert attrs(run) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "scripted",
        "gen_ai.system": "scripted",
        "gen_ai.agent.name": "helper",
        "gen_ai.conversation.id": result.session_id,
        "gen_ai.request.model": "tiny",
        "gen_ai.usage.input_tokens": 270,
        "gen_ai.usage.output_tokens": 12,
        "neta.run.outcome": "completed",
        "neta.run.turns": 2,
    }
    assert run.status.status_code == StatusCode.UNSET


def test_a_chat_span_carries_the_model_usage_and_finish_reason_of_its_call(tmp_path, spans):
    result = asyncio.run(agent_for(tmp_path, ECHO_RUN, model="tiny").run("go"))
    first, second = named(spans, "chat")
    assert first.kind == SpanKind.CLIENT
    assert attrs(first) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "scripted",
        "gen_ai.system": "scripted",
        "gen_ai.conversation.id": result.session_id,
        "gen_ai.request.model": "tiny",
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 7,
        "gen_ai.response.finish_reasons": ("tool_calls",),
    }
    assert attrs(second)["gen_ai.usage.input_tokens"] == 150
    assert "gen_ai.response.finish_reasons" not in attrs(second)  # the script gave none


def test_an_unnamed_agent_s_run_span_is_invoke_agent_alone(tmp_path, spans):
    asyncio.run(agent_for(tmp_path, [{"text": "hi"}]).run("go"))
    run = one(spans, "invoke_agent")
    assert run.name == "invoke_agent"
    assert "gen_ai.agent.name" not in attrs(run)
    assert one(spans, "chat").name == "chat"  # no model named anywhere


def test_a_tool_span_names_the_tool_and_its_call(tmp_path, spans):
    asyncio.run(agent_for(tmp_path, ECHO_RUN).run("go"))
    tool = one(spans, "execute_tool")
    assert tool.kind == SpanKind.INTERNAL
    assert attrs(tool) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "echo",
        "gen_ai.tool.call.id": "call_1_1",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Echo text back.",
    }
    assert not failed(tool)


def test_a_failing_tool_s_span_is_an_error_and_the_run_goes_on(tmp_path, spans):
    turns = [{"tool_calls": [call("boom"), call("ecko")]}, {"text": "sorry"}]
    result = asyncio.run(agent_for(tmp_path, turns).run("go"))
    assert result.outcome == "completed"
    boom, unknown = named(spans, "execute_tool")
    for span in (boom, unknown):
        assert failed(span)
        assert attrs(span)["error.type"] == "tool_error"
        assert span.status.description is None  # the error's text is the tool's output: content
    assert "gen_ai.tool.description" not in attrs(unknown)
    assert not failed(one(spans, "invoke_agent"))


def test_a_provider_error_fails_its_chat_span_and_the_run_span(tmp_path, spans):
    turns = [{"error": {"message": "invalid x-api-key", "status": 401}}]
    result = asyncio.run(agent_for(tmp_path, turns).run("go"))
    assert result.outcome == "error"
    chat = one(spans, "chat")
    assert failed(chat)
    assert attrs(chat)["error.type"] == "401"
    assert "invalid x-api-key" in chat.status.description
    run = one(spans, "invoke_agent")
    assert failed(run)
    assert attrs(run)["error.type"] == "401"
    assert attrs(run)["neta.run.outcome"] == "error"


def test_each_retry_of_a_model_call_is_a_chat_span_of_its_own(tmp_path, spans):
    overloaded = {"error": {"message": "overloaded", "status": 529, "retryable": True}}
    agent = agent_for(
        tmp_path, [overloaded, {"text": "ok"}], retry=RetryPolicy(max_tries=2, base_delay=0)
    )
    assert asyncio.run(agent.run("go")).outcome == "completed"
    tried, answered = named(spans, "chat")
    assert attrs(tried)["error.type"] == "529"
    assert not failed(answered)
    run = one(spans, "invoke_agent")
    assert "neta.provider_retry" in event_names(run)
    assert event(run, "neta.provider_retry")["reason"] == "overloaded"


def test_a_run_that_raises_ends_its_span_as_an_error(tmp_path, spans):
    class Broken:
        name = "broken"

        async def complete(self, request, on_text):
            raise KeyError("choices")

    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    agent = Agent(provider=Broken(), plugin_manager=pm, workspace=tmp_path)
    with pytest.raises(KeyError):
        asyncio.run(agent.run("go"))
    run = one(spans, "invoke_agent")
    assert failed(run)
    assert attrs(run)["error.type"] == "KeyError"
    assert attrs(run)["neta.run.outcome"] == "error"
    assert attrs(one(spans, "chat"))["error.type"] == "KeyError"


def test_a_cancelled_run_s_span_says_so_without_an_error(tmp_path, spans):
    agent = agent_for(tmp_path, [{"tool_calls": [call("sleepy", {"seconds": 5})]}])

    async def cancel_soon():
        task = asyncio.ensure_future(agent.run("go"))
        while not named(spans, "chat"):
            await asyncio.sleep(0.01)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(cancel_soon())
    run = one(spans, "invoke_agent")
    assert attrs(run)["neta.run.outcome"] == "cancelled"
    assert not failed(run)
    assert not failed(one(spans, "execute_tool"))


def test_events_become_span_events_on_the_span_they_happened_in(tmp_path, spans):
    asyncio.run(agent_for(tmp_path, ECHO_RUN).run("go"))
    run = one(spans, "invoke_agent")
    assert event_names(run) == ["neta.run_started", "neta.run_finished"]
    assert event(run, "neta.run_started") == {"tools": tuple(kit_tool_names())}
    assert event(run, "neta.run_finished") == {"outcome": "completed", "turns": 2}
    tool = one(spans, "execute_tool")
    assert event_names(tool) == [
        "neta.tool_call_start",
        "neta.permission_decision",
        "neta.tool_result",
    ]
    assert event(tool, "neta.permission_decision")["action"] == "allow"
    assert event(tool, "neta.tool_call_start") == {"call_id": "call_1_1", "name": "echo"}
    finished = event(tool, "neta.tool_result")
    assert (finished["name"], finished["is_error"]) == ("echo", False)
    assert "content" not in finished
    for span in spans.get_finished_spans():  # text deltas are the reply: never events
        assert "neta.text_delta" not in event_names(span)


def test_an_event_a_plain_function_tool_emits_lands_on_its_tool_span(tmp_path, spans):
    asyncio.run(agent_for(tmp_path, [{"tool_calls": [call("plans")]}, {"text": "ok"}]).run("go"))
    tool = one(spans, "execute_tool plans")
    assert "neta.todo_update" in event_names(tool)
    assert event(tool, "neta.todo_update") == {"counts": "{}", "revision": 1}


def test_content_is_left_out_by_default(tmp_path, spans):
    asyncio.run(agent_for(tmp_path, ECHO_RUN).run("go secret"))
    for span in spans.get_finished_spans():
        assert content_keys(span) == [], span.name
        for recorded in span.events:
            assert "secret" not in json.dumps(dict(recorded.attributes or {})), recorded.name


def test_content_is_recorded_when_enabled(tmp_path, content_spans):
    asyncio.run(agent_for(tmp_path, ECHO_RUN).run("go"))
    first, second = named(content_spans, "chat")
    system = json.loads(attrs(first)["gen_ai.system_instructions"])
    assert system[0]["type"] == "text"
    assert "echo" in system[0]["content"]
    assert json.loads(attrs(first)["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "go"}]}
    ]
    assert json.loads(attrs(first)["gen_ai.output.messages"]) == [
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "Echoing."},
                {
                    "type": "tool_call",
                    "id": "call_1_1",
                    "name": "echo",
                    "arguments": {"text": "secret ping"},
                },
            ],
            "finish_reason": "tool_calls",
        }
    ]
    sent = json.loads(attrs(second)["gen_ai.input.messages"])
    assert sent[-1] == {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "call_1_1", "result": "echo: secret ping"}],
    }
    tool = one(content_spans, "execute_tool")
    assert attrs(tool)["gen_ai.tool.call.arguments"] == '{"text": "secret ping"}'
    assert attrs(tool)["gen_ai.tool.call.result"] == "echo: secret ping"
    assert event(tool, "neta.tool_result")["content"] == "echo: secret ping"
    run = one(content_spans, "invoke_agent")
    assert event(run, "neta.run_started")["message"] == "go"
    assert event(run, "neta.run_finished")["text"] == "Done: secret pong."


def test_a_failing_tool_s_error_text_is_its_status_when_content_is_recorded(
    tmp_path, content_spans
):
    asyncio.run(agent_for(tmp_path, [{"tool_calls": [call("boom")]}, {"text": "ok"}]).run("go"))
    tool = one(content_spans, "execute_tool")
    assert tool.status.description == "Error: tool 'boom' failed: RuntimeError: kaboom"


def test_the_standard_variable_turns_content_recording_on(tmp_path, monkeypatch):
    monkeypatch.setenv(neta.tracing.CAPTURE_CONTENT_VARIABLE, "True")
    provider, exporter = in_memory_provider()
    neta.tracing.enable(provider)
    try:
        asyncio.run(agent_for(tmp_path, ECHO_RUN).run("go"))
    finally:
        neta.tracing.disable()
    assert content_keys(one(exporter, "execute_tool")) == [
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    ]


def test_the_programmatic_switch_wins_over_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv(neta.tracing.CAPTURE_CONTENT_VARIABLE, "true")
    provider, exporter = in_memory_provider()
    neta.tracing.enable(provider, capture_content=False)
    try:
        asyncio.run(agent_for(tmp_path, ECHO_RUN).run("go"))
    finally:
        neta.tracing.disable()
    assert all(content_keys(span) == [] for span in exporter.get_finished_spans())


def test_each_model_of_a_fallback_list_tried_is_a_chat_span_naming_it(tmp_path, spans):
    from tests.core.providers.test_fallback import Models, agent, fails

    primary = neta.ScriptedProvider([fails(401, "invalid x-api-key")])
    backup = neta.ScriptedProvider([{"text": "Hello from the backup."}])
    models = Models(primary=primary, backup=backup)
    result = asyncio.run(agent(tmp_path, models, ["primary:big", "backup:small"]).run("hi"))
    assert result.outcome == "completed", result.reason
    tried, answered = named(spans, "chat")
    assert (tried.name, answered.name) == ("chat big", "chat small")
    assert attrs(tried)["gen_ai.request.model"] == "big"
    assert attrs(tried)["error.type"] == "401"
    assert attrs(answered)["gen_ai.request.model"] == "small"
    assert not failed(answered)
    run = one(spans, "invoke_agent")
    assert {s.name for s in children(spans, run)} == {"chat big", "chat small"}
    assert event(run, "neta.model_fallback")["model"] == "backup:small"
    assert not failed(run)


def test_runs_are_not_traced_once_tracing_is_disabled(tmp_path, spans):
    neta.tracing.disable()
    assert neta.tracing.active() is None
    asyncio.run(agent_for(tmp_path, ECHO_RUN).run("go"))
    assert spans.get_finished_spans() == ()


def kit_tool_names():
    return [name for name, *_ in kit.SCHEMAS]
