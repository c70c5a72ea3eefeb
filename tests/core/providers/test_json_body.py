"""Request bodies: the same JSON as encoding the whole request, with repeated pieces reused."""

import json
import math

import pytest

from neta.messages import Message
from neta.providers.json_body import BodyEncoder
from neta.tools import ToolCall


def tools():
    """New tool definitions (the process keeps the JSON of those it has seen)."""
    return [
        {"type": "function", "function": {"name": f"t{i}", "parameters": {"type": "object"}}}
        for i in range(3)
    ]


TOOLS = tools()


def conversation(turns):
    history = [Message(role="system", content="You are careful. " * 50)]
    for i in range(turns):
        history.append(Message(role="user", content=f"question {i} é ✓"))
        call = ToolCall(id=f"c{i}", name="t0", arguments='{"x": 1}')
        history.append(Message(role="assistant", content=None, tool_calls=[call]))
        history.append(Message(role="tool", content="result", tool_call_id=f"c{i}", name="t0"))
    return history


def test_the_body_is_the_whole_request_as_json():
    history = conversation(2)
    body = BodyEncoder().body("m", history, TOOLS, {"stream": True, "stream_options": {"a": 1}})
    assert json.loads(body) == {
        "model": "m",
        "messages": [m.to_openai() for m in history],
        "tools": TOOLS,
        "stream": True,
        "stream_options": {"a": 1},
    }
    assert "é ✓".encode() in body  # UTF-8 as it is, as the SDK sends it


def test_no_tools_no_tools_key():
    assert json.loads(BodyEncoder().body("m", conversation(0), [])) == {
        "model": "m",
        "messages": [conversation(0)[0].to_openai()],
    }


def test_a_turn_encodes_only_what_it_adds():
    encoder = BodyEncoder()
    history, offered = conversation(3), tools()
    encoder.body("m", history, offered)
    assert encoder.encoded == len(history) + len(offered)
    history.append(Message(role="assistant", content="done"))
    body = encoder.body("m", history, offered)
    assert encoder.encoded == len(history) + len(offered)  # one more: the new message
    assert json.loads(body)["messages"][-1] == {"role": "assistant", "content": "done"}


def test_sessions_offering_the_same_tools_share_their_json():
    offered = tools()
    BodyEncoder().body("m", conversation(1), offered)
    other = BodyEncoder()  # another session's provider
    body = other.body("m", conversation(2), offered)
    assert other.encoded == len(conversation(2))  # its messages only
    assert json.loads(body)["tools"] == offered


def test_a_message_replaced_by_a_copy_is_encoded_again():
    encoder = BodyEncoder()
    history = conversation(1)
    encoder.body("m", history, [])
    history[1] = history[1].model_copy(update={"content": "changed"})  # as the runtime does
    body = encoder.body("m", history, [])
    assert json.loads(body)["messages"][1] == {"role": "user", "content": "changed"}


def test_forgetting_drops_the_conversation_and_keeps_nothing_of_it():
    encoder = BodyEncoder()
    history = conversation(2)
    encoder.body("m", history, [])
    encoder.forget()
    before = encoder.encoded
    encoder.body("m", history, [])
    assert encoder.encoded - before == len(history)  # every message encoded again


def test_dates_and_pydantic_models_are_encoded_as_the_sdk_encodes_them():
    import datetime as dt

    from neta.todos import TodoItem

    item = TodoItem(id="1", content="paint", status="pending")
    tools = [{"type": "function", "function": {"name": "t", "since": dt.date(2026, 12, 1)}}]
    body = BodyEncoder().body("m", conversation(0), tools, {"example": item})
    sent = json.loads(body)
    assert sent["tools"][0]["function"]["since"] == "2026-12-01"
    assert sent["example"] == item.model_dump(mode="json", exclude_unset=True)


def test_two_conversations_in_turn_each_get_their_own_messages():
    encoder = BodyEncoder()
    one, two = conversation(1), conversation(2)
    for _ in range(2):
        assert json.loads(encoder.body("m", one, TOOLS))["messages"] == [m.to_openai() for m in one]
        assert json.loads(encoder.body("m", two, TOOLS))["messages"] == [m.to_openai() for m in two]


def test_a_value_json_cannot_hold_is_refused():
    tools = [{"type": "function", "function": {"name": "t", "x": math.nan}}]
    with pytest.raises(ValueError, match="JSON compliant"):
        BodyEncoder().body("m", conversation(0), tools)
