"""A ``todo`` call shows once, as the list it writes (``neta run``, in this process)."""

import json

from tests.core.cli.cli_runner import neta_in_process
from tests.services import neta_environ

TODOS = [
    {"id": "1", "content": "Read the parser", "status": "in_progress"},
    {"id": "2", "content": "Fix the off-by-one", "status": "pending"},
]


def todo_call(todos=TODOS):
    return {"name": "todo", "arguments": {"todos": todos}}


def run(tmp_path, turns):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    (tmp_path / "notes.txt").write_text("a note\n")
    argv = ["run", "plan it", "--script", str(script), "-w", str(tmp_path)]
    done = neta_in_process(*argv, env=neta_environ(COLUMNS="200"))
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_a_todo_call_shows_once_as_the_list_it_writes(tmp_path):
    shown = run(tmp_path, [{"tool_calls": [todo_call()]}, {"text": "Planned."}])
    assert shown.count("todo (rev 1)") == 1
    assert shown.count("Read the parser") == 1
    assert shown.count("Fix the off-by-one") == 1
    assert "→ todo" not in shown  # not its arguments as JSON, cut mid-object
    assert "Todo list, revision" not in shown  # nor its result saying the same


def test_a_todo_call_beside_another_call_still_shows_once(tmp_path):
    read = {"name": "read_file", "arguments": {"path": "notes.txt"}}
    shown = run(tmp_path, [{"tool_calls": [todo_call(), read]}, {"text": "Planned."}])
    assert shown.count("Read the parser") == 1  # the result of the todo call does not repeat it
    assert "→ read_file path='notes.txt'" in shown
    assert "a note" in shown


def test_a_todo_call_that_fails_shows_its_call_and_the_error(tmp_path):
    bad = [{"id": "1", "content": "x", "status": "someday"}]
    shown = run(tmp_path, [{"tool_calls": [todo_call(bad)]}, {"text": "Oops."}])
    assert "→ todo" in shown
    assert "✗ Error" in shown
