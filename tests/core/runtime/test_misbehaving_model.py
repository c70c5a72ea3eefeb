"""The runtime against a model server that misbehaves, through the real SDK on a loopback port.

The fake server refuses an invalid history with 400 as the real API does, so each test also
shows that the session stays usable: the next request is accepted.
"""

import asyncio
import json
import re

import pytest

import neta
from neta.catalog import TOOL_NAME_PATTERN
from neta.events import TextDelta, ToolCallStart, ToolResultEvent
from neta.runtime.agent import Agent
from tests.core.runtime import kit
from tests.fake_openai import FakeOpenAI, Reply


def agent_for(server, tmp_path, *, tries=1, **options):
    """An agent on the fake server; failed requests are tried ``tries`` times in all."""
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    return Agent(
        permissions="auto",
        provider="openai",
        model="fake-model",
        plugin_manager=pm,
        workspace=tmp_path,
        provider_options={
            "base_url": server.base_url,
            "api_key": "sk-test",
        },
        retry=neta.RetryPolicy(max_tries=tries, base_delay=0.01),
        **options,
    )


def results(result):
    return [e for e in result.events if isinstance(e, ToolResultEvent)]


def stored_calls(session):
    return [c for m in session.history if m.role == "assistant" for c in m.tool_calls]


@pytest.mark.parametrize("bad_name", ["read file", "", "echo!", "x" * 65, "функция"])
def test_invalid_tool_name_gets_an_error_and_the_session_stays_usable(tmp_path, bad_name):
    replies = [
        Reply(tool_calls=[(bad_name, "{}")]),
        Reply(text="I see."),
        Reply(text="Still here."),
    ]
    with FakeOpenAI(replies) as server:
        agent = agent_for(server, tmp_path)
        session = agent.new_session()
        first = asyncio.run(agent.run("go", session=session))
        second = asyncio.run(agent.run("again", session=session))
    assert server.rejected == []
    assert (first.outcome, first.text) == ("completed", "I see.")
    assert (second.outcome, second.text) == ("completed", "Still here.")
    [event] = results(first)
    assert event.is_error
    assert f"{bad_name!r} is not a valid tool name" in event.content  # what the model meant
    assert "Available tools:" in event.content
    [call] = stored_calls(session)
    assert re.match(TOOL_NAME_PATTERN, call.name)


def test_invalid_tool_name_close_to_a_real_one_suggests_it_and_does_not_run_it(tmp_path):
    replies = [Reply(tool_calls=[("ec ho", '{"text": "hi"}')]), Reply(text="ok")]
    with FakeOpenAI(replies) as server:
        result = asyncio.run(agent_for(server, tmp_path).run("go"))
    [event] = results(result)
    assert event.is_error
    assert "echo" in event.content
    assert "echo: hi" not in event.content
    assert server.rejected == []


def test_duplicate_call_ids_in_one_reply_run_both_calls_under_unique_ids(tmp_path):
    calls = [("echo", '{"text": "one"}'), ("echo", '{"text": "two"}'), ("echo", '{"text": "3"}')]
    replies = [
        Reply(tool_calls=calls, call_ids=["dup", "dup", ""]),
        Reply(text="done"),
        Reply(text="more"),
    ]
    with FakeOpenAI(replies) as server:
        agent = agent_for(server, tmp_path)
        session = agent.new_session()
        first = asyncio.run(agent.run("go", session=session))
        second = asyncio.run(agent.run("again", session=session))
    assert server.rejected == []
    assert (first.text, second.text) == ("done", "more")
    ids = [c.id for c in stored_calls(session)]
    assert len(set(ids)) == 3
    assert all(ids)
    assert ids[0] == "dup"  # the first keeps the model's id
    sent = server.requests[1]["messages"]
    answers = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
    assert sorted(answers.values()) == ["echo: 3", "echo: one", "echo: two"]
    assert [e.call_id for e in results(first)] == ids


@pytest.mark.parametrize(
    "arguments",
    [
        "[" * 10_000 + "]" * 10_000,
        '{"text": ' + "[" * 10_000 + "]" * 10_000 + "}",
        '{"items": ' + '[{"id": "a", "note": ' * 3000 + '"x"' + "}]" * 3000 + "}",
    ],
    ids=["brackets", "nested-value", "nested-objects"],
)
def test_deeply_nested_arguments_are_an_error_result_not_a_crash(tmp_path, arguments):
    replies = [Reply(tool_calls=[("nested", arguments)]), Reply(text="recovered")]
    with FakeOpenAI(replies) as server:
        agent = agent_for(server, tmp_path)
        session = agent.new_session()
        result = asyncio.run(agent.run("go", session=session))
    assert (result.outcome, result.text) == ("completed", "recovered")
    [event] = results(result)
    assert event.is_error
    assert "arguments for 'nested'" in event.content
    assert server.rejected == []
    assert [m.role for m in session.history] == ["user", "assistant", "tool", "assistant"]


def test_stream_cut_after_forty_characters_is_retried_and_then_answers(tmp_path):
    replies = [Reply(text="A long answer that the server cuts " * 4, cut_after_chars=40)]
    replies.append(Reply(text="The whole answer."))
    with FakeOpenAI(replies) as server:
        result = asyncio.run(agent_for(server, tmp_path, tries=2).run("go"))
    assert (result.outcome, result.text) == ("completed", "The whole answer.")
    assert len(server.requests) == 2


@pytest.mark.parametrize("where", ["text", "arguments"])
def test_stream_cut_every_time_ends_with_outcome_error_saying_the_reply_was_cut_off(
    tmp_path, where
):
    if where == "text":
        reply = Reply(text="A long answer that the server cuts " * 4, cut_after_chars=40)
    else:
        reply = Reply(tool_calls=[("echo", json.dumps({"text": "y" * 200}))], cut_after_chars=40)
    with FakeOpenAI([reply, reply]) as server:
        agent = agent_for(server, tmp_path, tries=2)
        session = agent.new_session()
        result = asyncio.run(agent.run("go", session=session))
    assert result.outcome == "error"
    assert "cut off" in result.reason
    assert len(server.requests) == 2  # tried again under the retry policy
    assert not any(isinstance(e, ToolCallStart) for e in result.events)  # nothing half-run
    assert [m.role for m in session.history] == ["user"]  # nothing cut was stored


def test_stream_cut_with_no_retries_left_is_not_an_answer(tmp_path):
    reply = Reply(text="Truncated answ" * 10, cut_after_chars=40)
    with FakeOpenAI([reply]) as server:
        result = asyncio.run(agent_for(server, tmp_path).run("go"))
    assert result.outcome == "error"
    assert result.text == ""
    assert "cut off" in result.reason


def test_one_long_run_is_compacted_between_its_turns_and_stays_valid(tmp_path):
    replies = [Reply(tool_calls=[("echo", json.dumps({"text": f"step {n}"}))]) for n in range(30)]
    replies.append(Reply(text="finished"))
    with FakeOpenAI(replies) as server:
        agent = agent_for(server, tmp_path, compact_after=10, max_turns=40)
        result = asyncio.run(agent.run("the long task, word for word"))
    assert (result.outcome, result.text) == ("completed", "finished")
    assert server.rejected == []
    sizes = [len(body["messages"]) for body in server.requests]
    assert max(sizes) <= 1 + 10 + 2  # system + what compaction allows + one turn's growth
    last = server.requests[-1]["messages"]
    assert last[1]["content"].startswith("[Earlier conversation compacted]")
    assert last[2] == {"role": "user", "content": "the long task, word for word"}


def test_a_server_trickling_its_reply_is_stopped_at_the_turn_deadline(tmp_path):
    reply = Reply(text="slow " * 200, trickle=0.2)  # each chunk well within a read timeout
    with FakeOpenAI([reply]) as server:
        agent = agent_for(server, tmp_path, turn_timeout=1.0)
        result = asyncio.run(agent.run("go"))
    assert result.outcome == "error"
    assert "within 1 s (the turn deadline)" in result.reason
    # the server waits 0.2 s before each chunk: stopped at 1 s, far fewer than 10 came
    assert len([e for e in result.events if isinstance(e, TextDelta)]) < 10


def test_a_silent_server_is_stopped_at_the_model_timeout_per_read(tmp_path):
    # silent before each chunk five times as long as the timeout: a late one would read it all
    with FakeOpenAI([Reply(text="never finished", trickle=2.5)]) as server:
        agent = agent_for(server, tmp_path, model_timeout=0.5)
        result = asyncio.run(agent.run("go"))
    assert result.outcome == "error"
    assert "sent nothing for 0.5 s" in result.reason
    assert not [e for e in result.events if isinstance(e, TextDelta)]


def test_too_many_calls_in_one_reply_run_up_to_the_cap_and_the_model_is_told(tmp_path):
    calls = [("echo", json.dumps({"text": str(n)})) for n in range(1000)]  # 100 times the cap
    with FakeOpenAI([Reply(tool_calls=calls), Reply(text="ok")]) as server:
        agent = agent_for(server, tmp_path, max_calls_per_reply=10)
        session = agent.new_session()
        result = asyncio.run(agent.run("go", session=session))
    assert (result.outcome, server.rejected) == ("completed", [])
    ran = [e for e in results(result) if not e.is_error]
    [told] = [e for e in results(result) if e.is_error]
    assert [e.content for e in ran] == [f"echo: {n}" for n in range(10)]
    assert "1000 tool calls, more than the 10 allowed" in told.content
    assert len(stored_calls(session)) == 11  # the history stays bounded


def test_a_huge_reply_runs_no_call_and_tells_the_model_to_write_less(tmp_path):
    huge = json.dumps({"text": "x" * 3_000_000})
    with FakeOpenAI([Reply(tool_calls=[("echo", huge)]), Reply(text="smaller now")]) as server:
        agent = agent_for(server, tmp_path, max_reply_chars=1_000_000)
        session = agent.new_session()
        result = asyncio.run(agent.run("go", session=session))
    assert (result.outcome, result.text, server.rejected) == ("completed", "smaller now", [])
    [event] = results(result)
    assert event.is_error
    assert "more than the 1,000,000 allowed" in event.content
    assert sum(len(m.model_dump_json()) for m in session.history) < 100_000


def test_a_huge_final_answer_is_cut_in_the_middle_and_says_so(tmp_path):
    with FakeOpenAI([Reply(text=("x" * 999 + " ") * 200)]) as server:
        agent = agent_for(server, tmp_path, max_reply_chars=100_000)
        result = asyncio.run(agent.run("go"))
    assert result.outcome == "completed"
    assert len(result.text) < 100_200, len(result.text)
    assert "characters omitted" in result.text
    assert "more than the 100,000 allowed" in result.reason


def test_a_history_stored_before_with_bad_names_and_ids_is_repaired_when_a_run_starts(tmp_path):
    from neta.messages import Message
    from neta.tools import ToolCall

    poisoned = [
        Message(role="user", content="earlier"),
        Message(
            role="assistant",
            tool_calls=[
                ToolCall(id="same", name="read file", arguments="{}"),
                ToolCall(id="same", name="echo", arguments='{"text": "a"}'),
            ],
        ),
        Message(role="tool", content="Error: unknown tool", tool_call_id="same", name="read file"),
        Message(role="tool", content="echo: a", tool_call_id="same", name="echo"),
        Message(role="assistant", content="done before"),
    ]
    with FakeOpenAI([Reply(text="fine now")]) as server:
        agent = agent_for(server, tmp_path)
        session = agent.new_session(history=poisoned)
        result = asyncio.run(agent.run("again", session=session))
    assert server.rejected == []
    assert (result.outcome, result.text) == ("completed", "fine now")
    sent = server.requests[0]["messages"]
    calls = sent[2]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["invalid_tool_name", "echo"]
    assert [m["tool_call_id"] for m in sent[3:5]] == [c["id"] for c in calls]
    assert [m["content"] for m in sent[3:5]] == ["Error: unknown tool", "echo: a"]
