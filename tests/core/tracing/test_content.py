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


SECRET = "s3cr3t-in-the-event"


def _every_event_with_content():
    from neta import events

    yield events.RunStarted(message=SECRET, tools=["bash"])
    yield events.ToolCallStart(call_id="c1", name="bash", arguments=SECRET)
    yield events.ToolResultEvent(call_id="c1", name="bash", content=SECRET, data={"x": SECRET})
    yield events.ToolProgress(name="bash", progress=1, message=SECRET)
    yield events.TodoUpdate(todos=[{"content": SECRET}], counts={"pending": 1}, revision=1)
    yield events.ClarifyRequest(request_id="q1", question=SECRET, choices=[SECRET])
    yield events.ApprovalRequested(request_id="a1", approval={"command": SECRET})
    yield events.PermissionDecided(
        call_id="c1", name="bash", action="allow", decided_by="user", rule=f"bash({SECRET})",
        reason=SECRET,
    )  # fmt: skip
    yield events.ProviderRetry(attempt=1, max_tries=3, delay=1.0, reason="429", message=SECRET)
    yield events.ModelFallback(failed="a", model="b", reason="500", message=SECRET)
    yield events.RunFinished(outcome="completed", text=SECRET, turns=1)


def test_no_event_field_holding_what_was_written_is_recorded_without_content_capture():
    from neta.tracing.spans import event_attributes

    for event in _every_event_with_content():
        kept = event_attributes(event, capture_content=False)
        assert SECRET not in repr(kept), (event.type, kept)
        assert SECRET in repr(event_attributes(event, capture_content=True)), event.type
