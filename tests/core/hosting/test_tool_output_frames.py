"""``tool_output`` events reach host clients as frames like every other runtime event."""

from pydantic import TypeAdapter

from neta.events import Event, ToolOutput
from neta.hosting.protocol import event_frame


def test_a_tool_output_event_is_a_frame_with_its_name_and_text():
    event = ToolOutput(name="bash", text="compiling\n", session_id="s1")
    assert event_frame("s1", event) == {
        "type": "tool_output",
        "sessionId": "s1",
        "data": {"name": "bash", "text": "compiling\n", "agent_id": None},
    }


def test_a_tool_output_event_reads_back_from_its_json():
    event = ToolOutput(name="bash", text="x", agent_id="child")
    assert TypeAdapter(Event).validate_json(event.model_dump_json()) == event
