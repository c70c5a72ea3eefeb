"""Neta's history onto Messages API blocks and back."""

from neta import Message, ToolCall
from neta_anthropic.history import from_anthropic, system_blocks, to_anthropic

HISTORY = [
    Message(role="system", content="Be brief."),
    Message(role="user", content="Fix a.py"),
    Message(
        role="assistant",
        content="Reading both.",
        tool_calls=[
            ToolCall(id="t1", name="read_file", arguments='{"path": "a.py"}'),
            ToolCall(id="t2", name="read_file", arguments='{"path": "b.py"}'),
        ],
    ),
    Message(role="tool", content="x = 1\n", tool_call_id="t1", name="read_file"),
    Message(
        role="tool",
        content="Error: no such file",
        tool_call_id="t2",
        name="read_file",
        is_error=True,
    ),
    Message(role="assistant", content="a.py is fine; b.py is missing."),
    Message(role="user", content="Thanks"),
]


def test_history_maps_onto_alternating_turns_with_tool_blocks():
    turns = to_anthropic(HISTORY)
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert turns[1]["content"] == [
        {"type": "text", "text": "Reading both."},
        {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.py"}},
        {"type": "tool_use", "id": "t2", "name": "read_file", "input": {"path": "b.py"}},
    ]
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "x = 1\n", "is_error": False},
        {
            "type": "tool_result",
            "tool_use_id": "t2",
            "content": "Error: no such file",
            "is_error": True,
        },
    ]


def test_history_maps_back_unchanged():
    system = system_blocks(HISTORY)
    assert system == [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    assert from_anthropic(system, to_anthropic(HISTORY)) == HISTORY


def test_a_user_message_after_tool_results_joins_their_turn_after_them():
    history = [
        Message(role="user", content="go"),
        Message(role="assistant", tool_calls=[ToolCall(id="t1", name="ask", arguments="{}")]),
        Message(role="tool", content="[question] which?", tool_call_id="t1", name="ask"),
        Message(role="user", content="the first"),
    ]
    turns = to_anthropic(history)
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert [b["type"] for b in turns[2]["content"]] == ["tool_result", "text"]
    assert from_anthropic(None, turns) == history


def test_empty_turns_get_placeholder_text_the_api_accepts():
    turns = to_anthropic([Message(role="user", content=""), Message(role="assistant")])
    assert turns[0]["content"] == [{"type": "text", "text": "(empty)"}]
    assert turns[1]["content"] == [{"type": "text", "text": "(empty)"}]


def test_plain_string_contents_map_back():
    history = from_anthropic("sys", [{"role": "user", "content": "hello"}])
    assert history == [
        Message(role="system", content="sys"),
        Message(role="user", content="hello"),
    ]
