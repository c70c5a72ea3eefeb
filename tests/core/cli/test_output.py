"""What ``neta run`` prints where: progress on stderr, the answer alone on stdout."""

import io
import json
import re

from rich.console import Console

from neta.cli.render import EventRenderer, call_preview
from neta.events import TextDelta, TodoUpdate, ToolCallStart, ToolResultEvent
from tests.core.cli.cli_runner import run_neta


def renderer(terminal=False):
    err, out = io.StringIO(), io.StringIO()
    console = Console(file=err, force_terminal=terminal, width=120, highlight=False)
    text = Console(file=out, force_terminal=terminal, width=120, highlight=False)
    return EventRenderer(console, text_console=text), err, out


def test_a_tool_call_preview_keeps_the_indentation_of_multi_line_arguments():
    arguments = json.dumps(
        {"path": "app.py", "old_string": "def f():\n    return 1\n", "new_string": "    x"}
    )
    preview = call_preview(arguments)
    assert preview.startswith("path='app.py' new_string='    x'")
    assert "\n  old_string:\n    def f():\n        return 1" in preview


def test_each_todo_update_prints_once():
    render, err, _ = renderer()
    todo = TodoUpdate(
        todos=[{"content": "write tests", "status": "in_progress"}], counts={}, revision=2
    )
    render(todo)
    render(todo)
    assert err.getvalue().count("write tests") == 1
    render(todo.model_copy(update={"revision": 3}))
    assert err.getvalue().count("write tests") == 2


def test_a_todo_update_shows_its_list_once_not_again_in_the_tools_result():
    render, err, _ = renderer()
    listed = "Todo list, revision 1: 1 in progress\n- [in_progress] 1: write tests"
    render(ToolCallStart(call_id="c1", name="todo", arguments='{"todos": []}'))
    render(TodoUpdate(todos=[{"content": "write tests", "status": "in_progress"}], counts={},
                      revision=1))  # fmt: skip
    render(ToolResultEvent(call_id="c1", name="todo", content=listed))
    shown = err.getvalue()
    assert shown.count("write tests") == 1  # the panel
    assert "→ todo" not in shown  # the list alone tells it
    assert "Todo list" not in shown
    # a call that wrote no list during its call shows its line and its result whole
    render(ToolCallStart(call_id="c2", name="todo", arguments='{"todos": []}'))
    render(ToolResultEvent(call_id="c2", name="todo", content=listed))
    assert err.getvalue().count("write tests") == 2


def test_tool_calls_go_to_the_progress_stream_and_text_to_the_answer_stream():
    render, err, out = renderer()
    render(ToolCallStart(call_id="c", name="read_file", arguments='{"path": "a"}'))
    render(TextDelta(text="the answer"))
    assert "→ read_file path='a'" in err.getvalue()
    assert out.getvalue() == "the answer"
    assert render.answer_on_stdout


def test_run_prints_the_answer_alone_on_stdout_and_one_summary_line(capsys, tmp_path):
    (tmp_path / "notes.txt").write_text("  indented\n")
    script = tmp_path / "script.json"
    turns = [
        {
            "text": "Looking.",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}],
            "usage": {"input_tokens": 10, "output_tokens": 3},
        },
        {"text": "It is indented.", "usage": {"input_tokens": 20, "output_tokens": 4}},
    ]
    script.write_text(json.dumps({"turns": turns}))
    done = run_neta(capsys, "run", "look", "--script", str(script), "-w", str(tmp_path))
    assert done.code == 0, done.stderr
    assert done.stdout == "It is indented.\n"
    assert "→ read_file path='notes.txt'" in done.stderr
    summary = [line for line in done.stderr.splitlines() if " turns, " in line]
    assert len(summary) == 1
    assert re.fullmatch(r"2 turns, 1 tool call, 37 tokens \(30 in, 7 out\), \d+\.\d s", summary[0])


def test_run_json_prints_only_json_on_stdout(capsys, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "hi"}]}))
    done = run_neta(capsys, "run", "go", "--script", str(script), "-w", str(tmp_path), "--json")
    assert done.code == 0
    assert json.loads(done.stdout)["text"] == "hi"


def test_a_diff_in_a_tool_result_is_coloured_on_a_terminal():
    render, err, _ = renderer(terminal=True)
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old\n+new"
    render(ToolResultEvent(call_id="c", name="patch", content=diff))
    shown = err.getvalue()
    assert "\x1b[31m  -old" in shown  # red
    assert "\x1b[32m  +new" in shown  # green
    plain, err_plain, _ = renderer(terminal=False)
    plain(ToolResultEvent(call_id="c", name="patch", content=diff))
    assert "\x1b[" not in err_plain.getvalue()
    assert "-old" in err_plain.getvalue()
