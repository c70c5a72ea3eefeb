"""What a reply leaves in the history is one every provider accepts, whatever the model sent.

Call ids unique across the whole session (a server that answers ``call_0`` every time), ids of
the shape the APIs accept, and arguments that are a JSON object, or else an error result. Each
test runs through the real provider against the fake server, which refuses (400) what the
real API refuses, and shows that the next run on the same session completes.
"""

import asyncio
import json

import pytest

from neta.messages import Message
from neta.runtime.reply_check import MAX_ARGUMENT_DEPTH
from neta.tools import ToolCall
from tests.core.runtime.test_misbehaving_model import agent_for, results, stored_calls
from tests.fake_openai import FakeOpenAI, Reply


def echo(text):
    return ("echo", json.dumps({"text": text}))


def test_a_server_reusing_one_call_id_in_every_reply_keeps_the_session_usable(tmp_path):
    replies = [
        Reply(tool_calls=[echo("one")], call_ids=["call_0"]),
        Reply(tool_calls=[echo("two")], call_ids=["call_0"]),
        Reply(text="done"),
        Reply(tool_calls=[echo("three")], call_ids=["call_0"]),
        Reply(text="again done"),
    ]
    with FakeOpenAI(replies) as server:
        agent = agent_for(server, tmp_path)
        session = agent.new_session()
        first = asyncio.run(agent.run("go", session=session))
        second = asyncio.run(agent.run("more", session=session))
    assert server.rejected == []
    assert (first.text, second.text) == ("done", "again done")
    ids = [call.id for call in stored_calls(session)]
    assert len(ids) == len(set(ids)) == 3
    assert ids[0] == "call_0"  # the first keeps the model's id
    answered = [m.tool_call_id for m in session.history if m.role == "tool"]
    assert answered == ids
    assert [e.call_id for e in results(first) + results(second)] == ids


@pytest.mark.parametrize("bad_id", ["call.1", "call 1", "x" * 65, "функция"])
def test_a_call_id_of_a_shape_an_api_refuses_is_replaced(tmp_path, bad_id):
    replies = [Reply(tool_calls=[echo("one")], call_ids=[bad_id]), Reply(text="ok")]
    with FakeOpenAI(replies) as server:
        agent = agent_for(server, tmp_path)
        session = agent.new_session()
        result = asyncio.run(agent.run("go", session=session))
    assert server.rejected == []
    [call] = stored_calls(session)
    assert call.id != bad_id
    assert call.id.replace("_", "").replace("-", "").isascii()
    assert 0 < len(call.id) <= 64
    assert results(result)[0].content == "echo: one"


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ("[1, 2]", "must be a JSON object"),
        ('"text"', "must be a JSON object"),
        ("null", "must be a JSON object"),
        ('{"text": "unterminated', "not valid JSON"),
        ("[" * 10_000 + "]" * 10_000, "nested too deeply"),
        (
            '{"text": ' + "[" * (MAX_ARGUMENT_DEPTH + 1) + "]" * (MAX_ARGUMENT_DEPTH + 1) + "}",
            "deep",
        ),
    ],
    ids=["array", "string", "null", "not-json", "past-the-parser", "past-the-limit"],
)
def test_arguments_that_are_not_an_object_are_stored_as_one_with_an_error_result(
    tmp_path, arguments, said
):
    replies = [
        Reply(tool_calls=[("echo", arguments)]),
        Reply(text="recovered"),
        Reply(text="still fine"),
    ]
    with FakeOpenAI(replies) as server:
        agent = agent_for(server, tmp_path)
        session = agent.new_session()
        first = asyncio.run(agent.run("go", session=session))
        second = asyncio.run(agent.run("again", session=session))
    assert server.rejected == []
    assert (first.text, second.text) == ("recovered", "still fine")
    [call] = stored_calls(session)
    assert call.arguments == "{}"
    [event] = results(first)
    assert event.is_error
    assert said in event.content
    assert "arguments for 'echo'" in event.content
    sent = server.requests[-1]["messages"]
    assert [c["function"]["arguments"] for m in sent for c in m.get("tool_calls") or []] == ["{}"]


def test_arguments_nested_within_the_limit_still_run(tmp_path):
    deep = {"id": "a"}
    for _ in range(MAX_ARGUMENT_DEPTH - 3):
        deep = {"id": "a", "note": "x", "extra": deep}
    arguments = json.dumps({"items": [{"id": "a"}], "first": {"id": "b"}, "deep": deep})
    replies = [Reply(tool_calls=[("nested", arguments)]), Reply(text="ok")]
    with FakeOpenAI(replies) as server:
        agent = agent_for(server, tmp_path)
        session = agent.new_session()
        result = asyncio.run(agent.run("go", session=session))
    assert server.rejected == []
    [event] = results(result)
    assert not event.is_error, event.content
    assert stored_calls(session)[0].arguments == arguments


def test_a_history_stored_with_ids_reused_across_turns_is_repaired_when_a_run_starts(tmp_path):
    def turn(text, answer):
        return [
            Message(role="user", content=text),
            Message(
                role="assistant",
                tool_calls=[ToolCall(id="call_0", name="echo", arguments='{"text": "a"}')],
            ),
            Message(role="tool", content=answer, tool_call_id="call_0", name="echo"),
            Message(role="assistant", content="done"),
        ]

    broken = [
        Message(role="assistant", tool_calls=[ToolCall(id="call_1", name="echo", arguments="[")]),
        Message(
            role="tool", content="Error: bad", tool_call_id="call_1", name="echo", is_error=True
        ),
        Message(role="assistant", content="sorry"),
    ]
    stored = [*turn("first", "echo: a"), *turn("second", "echo: b"), *broken]
    with FakeOpenAI([Reply(text="fine now"), Reply(text="and after")]) as server:
        agent = agent_for(server, tmp_path)
        session = agent.new_session(history=stored)
        first = asyncio.run(agent.run("third", session=session))
        second = asyncio.run(agent.run("fourth", session=session))
    assert server.rejected == []
    assert (first.text, second.text) == ("fine now", "and after")
    sent = server.requests[0]["messages"]
    ids = [c["id"] for m in sent for c in m.get("tool_calls") or []]
    assert len(ids) == len(set(ids)) == 3
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == ids
    assert [m["content"] for m in sent if m["role"] == "tool"] == [
        "echo: a",
        "echo: b",
        "Error: bad",
    ]
    assert [c["function"]["arguments"] for m in sent for c in m.get("tool_calls") or []][2] == "{}"


def test_repair_reads_the_arguments_of_messages_not_checked_before_and_every_id():
    from neta.runtime.reply_check import repair_history

    def call_message(ident, arguments):
        return Message(
            role="assistant", tool_calls=[ToolCall(id=ident, name="echo", arguments=arguments)]
        )

    def answer(ident):
        return Message(
            role="tool", content="Error: x", tool_call_id=ident, name="echo", is_error=True
        )

    history = [call_message("a", "["), answer("a"), call_message("a", "["), answer("a")]
    assert repair_history(history, checked=2) == 1
    first, second = history[0].tool_calls[0], history[2].tool_calls[0]
    assert (first.id, first.arguments) == ("a", "[")  # checked before: not read again
    assert second.id != "a"  # ids are unique across the whole history all the same
    assert second.arguments == "{}"
    assert history[3].tool_call_id == second.id


def test_an_integer_too_long_to_read_is_an_error_result_not_a_crash(tmp_path):
    arguments = '{"text": ' + "1" * 5000 + "}"
    replies = [Reply(tool_calls=[("echo", arguments)]), Reply(text="recovered"), Reply(text="ok")]
    with FakeOpenAI(replies) as server:
        agent = agent_for(server, tmp_path)
        session = agent.new_session()
        first = asyncio.run(agent.run("go", session=session))
        second = asyncio.run(agent.run("again", session=session))
    assert server.rejected == []
    assert (first.text, second.text) == ("recovered", "ok")
    [event] = results(first)
    assert event.is_error
    assert "arguments for 'echo'" in event.content
    assert stored_calls(session)[0].arguments == "{}"


def test_half_a_surrogate_pair_in_a_reply_or_a_result_is_stored_as_a_replacement_character(
    tmp_path,
):
    replies = [
        Reply(text="look \ud800 here", tool_calls=[echo("odd \udcff byte")]),
        Reply(text="done \udfff"),
        Reply(text="still fine"),
    ]
    with FakeOpenAI(replies) as server:
        agent = agent_for(server, tmp_path)
        session = agent.new_session()
        first = asyncio.run(agent.run("go", session=session))
        second = asyncio.run(agent.run("again", session=session))
    assert server.rejected == []
    assert (first.outcome, second.text) == ("completed", "still fine")
    for message in session.history:
        for text in (message.content or "", *(c.arguments for c in message.tool_calls)):
            text.encode("utf-8")  # every stored text can be sent
    assert session.history[1].content == "look \ufffd here"
    assert session.history[2].is_error  # the tool's schema takes no such string
    assert first.text == "done \ufffd"
    # whatever makes a message (a tool's output, a host's history) gets the same
    made = Message(role="tool", content="odd \udcff byte", tool_call_id="c", name="echo")
    assert made.content == "odd \ufffd byte"
    call = ToolCall(id="c", name="echo", arguments='{"text": "\udcff"}')
    assert Message(role="assistant", tool_calls=[call]).tool_calls[0].arguments == (
        '{"text": "\ufffd"}'
    )
