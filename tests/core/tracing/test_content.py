"""The conventions' JSON of what the model was sent: each message encoded once per run."""

import json

from neta.messages import Message
from neta.providers.base import Conversation
from neta.tools import ToolCall
from neta.tracing.content import SentMessages

SYSTEM = (Message(role="system", content="Be brief."),)


def encoded(messages):
    system, sent = SentMessages().json(messages)
    return json.loads(system), json.loads(sent)


def test_a_growing_history_reads_as_if_encoded_whole_each_time():
    history = [Message(role="user", content="hi")]
    sent = SentMessages()
    for turn in range(3):
        system, messages = sent.json(Conversation(SYSTEM, history))
        assert (json.loads(system), json.loads(messages)) == encoded(Conversation(SYSTEM, history))
        call = ToolCall(id=f"c{turn}", name="echo", arguments='{"text": "x"}')
        history.append(Message(role="assistant", tool_calls=[call]))
        history.append(Message(role="tool", content="x", tool_call_id=f"c{turn}", name="echo"))
    assert json.loads(messages)[-1] == {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "c1", "result": "x"}],
    }


def test_a_history_replaced_in_place_is_encoded_anew():
    history = [Message(role="user", content=f"message {n}") for n in range(4)]
    sent = SentMessages()
    sent.json(Conversation(SYSTEM, history))
    history[:] = [Message(role="user", content="a summary"), history[-1]]  # compacted
    _, messages = sent.json(Conversation(SYSTEM, history))
    assert [m["parts"][0]["content"] for m in json.loads(messages)] == ["a summary", "message 3"]


def test_arguments_that_are_not_json_are_kept_as_text():
    call = ToolCall(id="c", name="echo", arguments="{not json")
    _, messages = encoded([Message(role="assistant", content="Trying.", tool_calls=[call])])
    assert messages[0]["parts"] == [
        {"type": "text", "content": "Trying."},
        {"type": "tool_call", "id": "c", "name": "echo", "arguments": "{not json"},
    ]
