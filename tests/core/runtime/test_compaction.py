"""Compacting a long history into one note that keeps only the open todo items."""

import asyncio

import pytest

import neta
import neta.todos
from neta.messages import Message
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from neta.runtime.compaction import NOTE_HEADER, compact_history
from neta.tools import ToolCall
from tests.core.runtime import kit


def user(text):
    return Message(role="user", content=text)


def answer(text):
    return Message(role="assistant", content=text)


def calling(*ids):
    return Message(
        role="assistant", tool_calls=[ToolCall(id=i, name="echo", arguments="{}") for i in ids]
    )


def result(call_id):
    return Message(role="tool", content=f"result {call_id}", tool_call_id=call_id, name="echo")


def store_with(*items):
    store = neta.todos.InMemoryTodoStore()
    store.write([neta.todos.TodoChange(id=i, content=c, status=s) for i, c, s in items])
    return store


def test_compact_history_shorter_than_keep_last_is_returned_unchanged():
    history = [user("hi"), answer("hello")]
    assert compact_history(history, keep_last=5, todo_store=None) == history


def test_compact_history_keeps_the_last_messages_starting_at_a_user_message():
    history = [user("one"), answer("1"), user("two"), answer("2"), user("three"), answer("3")]
    compacted = compact_history(history, keep_last=2, todo_store=None)
    assert compacted[1:] == history[4:]
    assert compacted[0].role == "user"
    assert compacted[0].content.startswith(NOTE_HEADER)
    assert "4 earlier messages" in compacted[0].content


def test_compact_history_moves_the_cut_earlier_so_tool_results_stay_with_their_call():
    history = [
        user("one"),
        answer("1"),
        user("two"),
        calling("c1", "c2"),
        result("c1"),
        result("c2"),
        answer("2"),
        user("three"),
    ]
    compacted = compact_history(history, keep_last=4, todo_store=None)
    assert compacted[1:] == history[2:]


def test_compact_history_moves_the_cut_later_when_no_user_message_precedes_it():
    history = [user("one"), calling("c1"), result("c1"), answer("1"), user("two")]
    compacted = compact_history(history, keep_last=3, todo_store=None)
    assert compacted[1:] == [user("two")]


def test_compact_history_keeps_a_question_that_ended_a_turn_with_the_reply_to_it():
    question = Message(
        role="tool", content="[clarify] Question: Which database?", tool_call_id="q", name="ask"
    )
    history = [
        user("one"),
        answer("1"),
        user("set up storage"),
        calling("q"),
        question,  # the turn ended here, awaiting the user's reply
        user("SQLite"),
        answer("done"),
        user("three"),
    ]
    compacted = compact_history(history, keep_last=3, todo_store=None)
    assert compacted[1:] == history[2:]


def test_compact_history_within_one_run_keeps_its_request_and_cuts_before_a_call():
    history = [user("one"), calling("c1"), result("c1"), calling("c2"), result("c2")]
    compacted = compact_history(history, keep_last=2, todo_store=None)
    assert compacted[0].content.startswith(NOTE_HEADER)
    assert "2 earlier messages" in compacted[0].content
    assert compacted[1:] == [user("one"), calling("c2"), result("c2")]


def test_compact_history_with_nothing_before_the_runs_first_call_keeps_everything():
    history = [user("one"), calling("c1"), result("c1")]
    assert compact_history(history, keep_last=2, todo_store=None) == history


@pytest.mark.parametrize("keep_last", range(1, 12))
def test_compact_history_never_separates_a_tool_result_from_its_call(keep_last):
    history = [
        user("one"),
        calling("a1"),
        result("a1"),
        answer("1"),
        user("two"),
        calling("b1", "b2"),
        result("b1"),
        result("b2"),
        calling("b3"),
        result("b3"),
        answer("2"),
        user("three"),
    ]
    compacted = compact_history(history, keep_last=keep_last, todo_store=None)
    called: set[str] = set()
    for message in compacted:
        called |= {c.id for c in message.tool_calls}
        if message.role == "tool":
            assert message.tool_call_id in called
    if compacted != history:
        kept = compacted[1:]
        assert kept == history[len(history) - len(kept) :]
        assert kept[0].role == "user"


def test_compaction_note_lists_the_users_requests_briefly():
    long_request = "please " + "refactor the module " * 30
    history = [user("Fix the parser"), answer("done"), user(long_request), answer("ok"), user("n")]
    note = compact_history(history, keep_last=1, todo_store=None)[0].content
    assert "- Fix the parser" in note
    request_line = next(line for line in note.splitlines() if line.startswith("- please"))
    assert len(request_line) <= 202
    assert request_line.endswith("…")


def test_compaction_note_reinjects_only_pending_and_in_progress_todos():
    store = store_with(
        ("a", "Read the spec", "completed"),
        ("b", "Write the parser", "in_progress"),
        ("c", "Drop the cache", "cancelled"),
        ("d", "Add tests", "pending"),
    )
    history = [user("one"), answer("1"), user("two"), answer("2"), user("three")]
    note = compact_history(history, keep_last=1, todo_store=store)[0].content
    assert "- [in_progress] b: Write the parser" in note
    assert "- [pending] d: Add tests" in note
    assert "Read the spec" not in note
    assert "Drop the cache" not in note


def test_compaction_note_says_so_when_no_todo_is_open():
    store = store_with(("a", "Read the spec", "completed"))
    history = [user("one"), answer("1"), user("two")]
    note = compact_history(history, keep_last=1, todo_store=store)[0].content
    assert "The todo list has no open items." in note
    assert "Read the spec" not in note


def test_compaction_note_without_a_store_has_no_todo_section():
    history = [user("one"), answer("1"), user("two")]
    note = compact_history(history, keep_last=1, todo_store=None)[0].content
    assert "todo" not in note.lower()


def test_compacting_twice_carries_the_earlier_requests_over():
    history = [user("first task"), answer("1"), user("second task"), answer("2"), user("third")]
    once = compact_history(history, keep_last=3, todo_store=None)
    twice = compact_history([*once, answer("3"), user("fourth")], keep_last=1, todo_store=None)
    note = twice[0].content
    assert note.count(NOTE_HEADER) == 1
    assert [line for line in note.splitlines() if line.startswith("- ")] == [
        "- first task",
        "- second task",
        "- third",
    ]


def test_compact_history_keep_last_below_one_is_a_config_error():
    with pytest.raises(neta.ConfigError, match="keep_last must be at least 1"):
        compact_history([user("x")], keep_last=0, todo_store=None)


def agent_for(tmp_path, turns, **options):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    provider = ScriptedProvider(turns)
    return Agent(provider=provider, plugin_manager=pm, workspace=tmp_path, **options), provider


def test_agent_compact_after_compacts_before_the_run_and_reinjects_open_todos(tmp_path):
    agent, provider = agent_for(
        tmp_path,
        [{"text": "first"}, {"text": "second"}, {"text": "third"}],
        compact_after=4,
    )
    store = store_with(("a", "Old step", "completed"), ("b", "Open step", "pending"))
    session = agent.new_session(todo_store=store)
    asyncio.run(agent.run("task one", session=session))
    asyncio.run(agent.run("task two", session=session))
    outcome = asyncio.run(agent.run("task three", session=session))
    assert outcome.outcome == "completed"
    sent = provider.received[2].messages
    assert [m.role for m in sent] == ["system", "user", "user", "assistant", "user"]
    note = sent[1].content
    assert note.startswith(NOTE_HEADER)
    assert "- task one" in note
    assert "- [pending] b: Open step" in note
    assert "Old step" not in note
    assert [m.content for m in outcome.messages[1:]] == [
        "task two",
        "second",
        "task three",
        "third",
    ]


def test_agent_without_compact_after_never_compacts(tmp_path):
    agent, provider = agent_for(tmp_path, [{"text": str(n)} for n in range(4)])
    session = agent.new_session()
    for n in range(4):
        asyncio.run(agent.run(f"task {n}", session=session))
    assert len(provider.received[3].messages) == 1 + 7
    assert not any(NOTE_HEADER in (m.content or "") for m in session.history)


def test_new_session_gets_an_in_memory_todo_store_unless_told_otherwise(tmp_path):
    agent, _ = agent_for(tmp_path, [])
    assert isinstance(agent.new_session().context.todo_store, neta.todos.InMemoryTodoStore)
    assert agent.new_session(todo_store=None).context.todo_store is None
    own = neta.todos.InMemoryTodoStore()
    assert agent.new_session(todo_store=own).context.todo_store is own
