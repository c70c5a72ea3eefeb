"""Every ``neta run`` and ``neta chat`` is a stored conversation: continue it, list it, show it."""

import json

import pytest

from neta.cli.conversations import Conversations
from tests.core.cli.cli_runner import run_neta


@pytest.fixture
def workspace(tmp_path):
    path = tmp_path / "ws"
    path.mkdir()
    return path


def script(tmp_path, turns, name="script.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"turns": turns}))
    return str(path)


def test_run_is_stored_and_listed_by_logs(capsys, tmp_path, workspace):
    turns = [{"text": "Hi Ada.", "usage": {"input_tokens": 7, "output_tokens": 2}}]
    done = run_neta(
        capsys, "run", "I am Ada", "--script", script(tmp_path, turns), "-w", str(workspace)
    )
    assert done.code == 0, done.stderr
    listed = run_neta(capsys, "logs", "--json")
    assert listed.code == 0, listed.stderr
    [row] = json.loads(listed.stdout)
    assert row["workspace"] == str(workspace.resolve())
    assert row["first_prompt"] == "I am Ada"
    assert row["outcome"] == "completed"
    assert (row["input_tokens"], row["output_tokens"], row["turns"]) == (7, 2, 1)
    table = run_neta(capsys, "logs")
    assert row["session_id"][:12] in table.stdout
    assert "I am Ada" in table.stdout


def test_logs_show_prints_the_conversation_and_json(capsys, tmp_path, workspace):
    run_neta(
        capsys,
        "run",
        "I am Ada",
        "--script",
        script(tmp_path, [{"text": "Hi Ada."}]),
        "-w",
        str(workspace),
    )
    [row] = json.loads(run_neta(capsys, "logs", "--json").stdout)
    shown = run_neta(capsys, "logs", "show", row["session_id"][:8])
    assert shown.code == 0, shown.stderr
    assert "user: I am Ada" in shown.stdout
    assert "assistant: Hi Ada." in shown.stdout
    as_json = json.loads(run_neta(capsys, "logs", "show", row["session_id"], "--json").stdout)
    assert [m["role"] for m in as_json["messages"]] == ["user", "assistant"]
    missing = run_neta(capsys, "logs", "show", "nosuchid")
    assert missing.code == 2
    assert missing.stderr.startswith("Error: no conversation with id 'nosuchid'")


def test_run_continue_goes_on_with_the_latest_conversation_in_this_workspace(
    capsys, tmp_path, workspace
):
    first = script(tmp_path, [{"text": "Nice to meet you, Ada."}], "one.json")
    second = script(
        tmp_path,
        [{"text": "You are Ada.", "expect": {"system_includes": ["Neta"]}}],
        "two.json",
    )
    assert run_neta(capsys, "run", "I am Ada", "--script", first, "-w", str(workspace)).code == 0
    done = run_neta(capsys, "run", "-c", "who am I?", "--script", second, "-w", str(workspace))
    assert done.code == 0, done.stderr
    assert done.stdout == "You are Ada.\n"
    [row] = json.loads(run_neta(capsys, "logs", "--json").stdout)  # one conversation, two runs
    conversations = Conversations()
    try:
        history = conversations.history(row["session_id"])
    finally:
        conversations.close()
    assert [m.content for m in history if m.role == "user"] == ["I am Ada", "who am I?"]


def test_continue_sends_the_earlier_turns_to_the_model(capsys, tmp_path, workspace):
    first = script(tmp_path, [{"text": "Noted: the colour is blue."}], "one.json")
    run_neta(capsys, "run", "remember blue", "--script", first, "-w", str(workspace))
    second = script(
        tmp_path,
        [{"text": "blue", "expect": {"last_message_contains": "which colour?"}}],
        "two.json",
    )
    done = run_neta(capsys, "run", "-c", "which colour?", "--script", second, "-w", str(workspace))
    assert done.code == 0, done.stderr
    conversations = Conversations()
    try:
        [row] = conversations.recent()
        history = conversations.history(row.session_id)
    finally:
        conversations.close()
    assert [m.role for m in history] == ["user", "assistant", "user", "assistant"]


def test_a_run_awaiting_an_answer_is_answered_with_run_c(capsys, tmp_path, workspace):
    ask = script(
        tmp_path,
        [{"tool_calls": [{"name": "clarify", "arguments": {"question": "Which colour?"}}]}],
        "ask.json",
    )
    asked = run_neta(capsys, "run", "paint it", "--script", ask, "-w", str(workspace), "--no-input")
    assert asked.code == 3, asked.stderr
    assert "Which colour?" in asked.stdout
    assert 'neta run -c "your answer"' in asked.stderr
    answer = script(
        tmp_path,
        [{"text": "Painted it blue.", "expect": {"last_message_contains": "blue"}}],
        "answer.json",
    )
    done = run_neta(capsys, "run", "-c", "blue", "--script", answer, "-w", str(workspace))
    assert done.code == 0, done.stderr
    assert done.stdout == "Painted it blue.\n"
    [row] = json.loads(run_neta(capsys, "logs", "--json").stdout)
    assert row["outcome"] == "completed"


def test_run_session_continues_a_given_conversation_from_anywhere(capsys, tmp_path, workspace):
    run_neta(
        capsys,
        "run",
        "hello",
        "--script",
        script(tmp_path, [{"text": "hi"}], "a.json"),
        "-w",
        str(workspace),
    )
    [row] = json.loads(run_neta(capsys, "logs", "--json").stdout)
    again = script(
        tmp_path, [{"text": "again", "expect": {"last_message_contains": "more"}}], "b.json"
    )
    done = run_neta(capsys, "run", "--session", row["session_id"], "more", "--script", again)
    assert done.code == 0, done.stderr
    [after] = json.loads(run_neta(capsys, "logs", "--json").stdout)
    assert after["workspace"] == str(workspace.resolve())  # it ran where it was started
    assert after["turns"] == 2


def test_continue_without_a_conversation_is_a_usage_error(capsys, tmp_path, workspace):
    done = run_neta(
        capsys, "run", "-c", "more", "--script", script(tmp_path, []), "-w", str(workspace)
    )
    assert done.code == 2
    assert done.stderr.startswith("Error: ")
    assert "no conversation in" in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_run_dash_reads_the_prompt_from_stdin(capsys, tmp_path, workspace):
    turns = [{"text": "ok", "expect": {"last_message_contains": "the task from a pipe"}}]
    done = run_neta(
        capsys, "run", "-", "--script", script(tmp_path, turns), "-w", str(workspace),
        stdin="the task from a pipe\n",
    )  # fmt: skip
    assert done.code == 0, done.stderr
    assert done.stdout == "ok\n"


def test_piped_stdin_is_added_after_the_prompt(capsys, tmp_path, workspace):
    turns = [{"text": "fixed", "expect": {"last_message_contains": "fix this\n\nTraceback: boom"}}]
    done = run_neta(
        capsys, "run", "fix this", "--script", script(tmp_path, turns), "-w", str(workspace),
        stdin="Traceback: boom\n",
    )  # fmt: skip
    assert done.code == 0, done.stderr


@pytest.mark.parametrize(
    ("args", "stdin"), [(["run", ""], ""), (["run", "-"], "  \n"), (["run"], "")]
)
def test_an_empty_prompt_is_a_usage_error(capsys, tmp_path, workspace, args, stdin):
    done = run_neta(
        capsys, *args, "--script", script(tmp_path, []), "-w", str(workspace), stdin=stdin
    )
    assert done.code == 2
    assert done.stderr.startswith("Error: ")
    assert "the task is empty" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert json.loads(run_neta(capsys, "logs", "--json").stdout) == []  # nothing was stored


def test_chat_continue_resumes_the_latest_conversation(capsys, tmp_path, workspace):
    first = script(tmp_path, [{"text": "Hello Ada."}], "one.json")
    done = run_neta(capsys, "chat", "--script", first, "-w", str(workspace), stdin="I am Ada\n")
    assert done.code == 0, done.stderr
    second = script(
        tmp_path,
        [{"text": "You are Ada.", "expect": {"last_message_contains": "who am I"}}],
        "two.json",
    )
    done = run_neta(
        capsys, "chat", "-c", "--script", second, "-w", str(workspace), stdin="who am I\n"
    )
    assert done.code == 0, done.stderr
    assert "You are Ada." in done.stdout
    [row] = json.loads(run_neta(capsys, "logs", "--json").stdout)
    assert row["command"] == "chat"
    assert row["turns"] == 2


def test_logs_show_says_why_a_run_ended_and_whose_turn_a_call_was(capsys, tmp_path, workspace):
    turns = [
        {"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
        {"text": "Done looking."},
        {"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
    ]
    path = script(tmp_path, turns)
    first = run_neta(capsys, "run", "look", "--script", path, "-w", str(workspace))
    assert first.code == 0, first.stderr
    [row] = json.loads(run_neta(capsys, "logs", "--json").stdout)
    again = run_neta(
        capsys, "run", "again", "--session", row["session_id"], "--max-turns", "1",
        "--script", path, "-w", str(workspace),
    )  # fmt: skip
    assert again.code != 0
    shown = run_neta(capsys, "logs", "show", row["session_id"]).stdout
    assert "why: stopped after 1 turns" in shown
    # the call stands under the assistant's name, not under the user's message before it
    assert "\nuser: look\n\nassistant:\n  → list_dir" in shown
    [row] = json.loads(run_neta(capsys, "logs", "--json").stdout)
    assert row["reason"].startswith("stopped after 1 turns")
