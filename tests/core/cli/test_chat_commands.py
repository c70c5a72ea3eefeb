"""``neta chat``'s own commands and its banner, with lines piped in (in this process)."""

import json
import re

from rich.cells import cell_len

from tests.core.cli.cli_runner import neta_in_process
from tests.services import neta_environ

HINT = "/help · Ctrl-D exits"


def plan(content):
    """A turn that calls the todo tool with a one-item list."""
    todos = [{"id": "1", "content": content, "status": "in_progress"}]
    return {"tool_calls": [{"name": "todo", "arguments": {"todos": todos}}]}


def chat(tmp_path, turns, lines, *args, columns=80):
    """``neta chat`` replaying ``turns``, told ``lines``; the finished process."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    argv = ["chat", "--script", str(script), "-w", str(workspace), *args]
    env = neta_environ(COLUMNS=str(columns))
    done = neta_in_process(*argv, input_text="".join(f"{line}\n" for line in lines), env=env)
    assert done.returncode == 0, done.stderr
    return done


def logged_ids():
    """The ids of the stored conversations, the latest first."""
    done = neta_in_process("logs", "--json", env=neta_environ())
    assert done.returncode == 0, done.stderr
    return [entry["session_id"] for entry in json.loads(done.stdout)]


def session_ids(stderr):
    """The ids ``/session`` gave, each on one line with the command to come back."""
    return re.findall(r"^session ([0-9a-f]{32}) \(`neta chat --session \1`\)$", stderr, re.M)


def test_chat_banner_on_80_columns_keeps_the_exit_hint_and_lists_toolsets_that_fit(tmp_path):
    done = chat(tmp_path, [], [])
    [banner] = done.stderr.splitlines()
    assert banner.startswith("neta chat · scripted · ws · toolsets: base, crew")
    assert banner.endswith(HINT)
    assert "more" in banner  # the toolsets that did not fit are counted
    assert len(banner) <= 80


def test_chat_banner_on_a_wide_terminal_lists_every_toolset(tmp_path):
    done = chat(tmp_path, [], [], columns=200)
    [banner] = done.stderr.splitlines()
    assert banner.endswith(HINT)
    assert "more" not in banner
    listed = banner.split("toolsets: ")[1].split(" · ")[0].split(", ")
    shown = chat(tmp_path, [], ["/toolsets"], columns=200).stderr.splitlines()[1]
    assert shown == "toolsets: " + ", ".join(listed)


def test_chat_banner_shortens_a_long_model_and_workspace_but_keeps_the_exit_hint(tmp_path):
    workspace = tmp_path / ("w" * 70)
    workspace.mkdir()
    done = chat(tmp_path, [], [], "-w", str(workspace), "--model", "m" * 70)
    [banner] = done.stderr.splitlines()
    assert banner.startswith("neta chat · mmm")
    assert "…" in banner
    assert banner.endswith(HINT)
    assert len(banner) <= 80


def test_chat_banner_fits_the_columns_wide_characters_take(tmp_path):
    workspace = tmp_path / ("日本語のプロジェクト" * 4)  # each character takes two columns
    workspace.mkdir()
    done = chat(tmp_path, [], [], "-w", str(workspace), "--model", "m" * 24)
    [banner] = done.stderr.splitlines()
    assert banner.endswith(HINT)
    assert cell_len(banner) <= 80


def test_chat_todo_shows_the_list_the_model_wrote(tmp_path):
    done = chat(tmp_path, [plan("write tests"), {"text": "planned"}], ["/todo", "go", "/todo"])
    assert done.stderr.count("The todo list is empty.") == 1
    after = done.stderr.split("planned")[-1]
    assert "  [in_progress] write tests" in after


def test_chat_session_before_the_first_turn_says_nothing_is_stored_yet(tmp_path):
    done = chat(tmp_path, [], ["/session"])
    assert "Nothing said yet: the conversation is stored from its first turn." in done.stderr
    assert logged_ids() == []


def test_chat_session_gives_the_stored_id_and_the_command_to_come_back(tmp_path):
    done = chat(tmp_path, [{"text": "hello"}], ["hi", "/session"], columns=40)
    [session_id] = session_ids(done.stderr)  # on one line, however narrow the terminal
    assert logged_ids() == [session_id]
    back = chat(tmp_path, [{"text": "still here"}], ["again"], "--session", session_id)
    banner = back.stderr.splitlines()[0]
    assert f"resumed {session_id[:8]}" in banner
    assert banner.endswith(HINT)
    assert logged_ids() == [session_id]


def test_chat_clear_starts_a_new_stored_session_with_an_empty_todo_list(tmp_path):
    turns = [plan("first plan"), {"text": "planned"}, plan("second plan"), {"text": "again"}]
    lines = ["go", "/session", "/clear", "/todo", "/session", "go on", "/session", "/todo"]
    done = chat(tmp_path, turns, lines)
    err = done.stderr
    assert "Started a new conversation; the last one stays in `neta logs`." in err
    cleared = err.split("Started a new conversation")[1]
    assert "The todo list is empty." in cleared.split("→ todo")[0]
    assert "Nothing said yet" in cleared.split("→ todo")[0]
    assert "first plan" not in cleared
    assert "todo (rev 1)" in cleared  # the new list starts again at its first revision
    assert "  [in_progress] second plan" in cleared
    first, second = session_ids(err)
    assert logged_ids() == [second, first]  # the latest first


def test_chat_clear_leaves_the_earlier_messages_out_of_the_next_turn(tmp_path):
    done = chat(tmp_path, [{"text": "noted"}, {"text": "fresh"}], ["first", "/clear", "second"])
    assert "fresh" in done.stdout
    latest = logged_ids()[0]
    shown = neta_in_process("logs", "show", latest, "--json", env=neta_environ())
    said = [m["content"] for m in json.loads(shown.stdout)["messages"] if m["role"] == "user"]
    assert said == ["second"]
