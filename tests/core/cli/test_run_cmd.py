"""``neta run``, ``neta chat`` and ``neta prompt`` in real subprocesses."""

import json
import os
import re
import subprocess
import sys


def neta(*args, input_text=None, cwd=None, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NETA_", "OPENAI_"))}
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "neta", *args],
        capture_output=True,
        text=True,
        input=input_text,
        env=env,
        cwd=cwd,
        timeout=60,
        check=False,
    )


def write_script(tmp_path, turns):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": turns}))
    return str(path)


def test_run_reads_a_file_and_prints_the_answer(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the secret is 42\n")
    script = write_script(
        tmp_path,
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {"text": "The secret is 42.", "expect": {"last_message_contains": "the secret is 42"}},
        ],
    )
    done = neta(
        "run", "what is the secret?", "-p", "scripted", "--script", script, "-w", str(workspace)
    )
    assert done.returncode == 0, done.stderr
    assert "→ read_file" in done.stdout
    assert done.stdout.rstrip().endswith("The secret is 42.")


def test_run_json_prints_outcome_events_and_usage(tmp_path):
    script = write_script(
        tmp_path, [{"text": "hi", "usage": {"input_tokens": 3, "output_tokens": 1}}]
    )
    done = neta("run", "hello", "-p", "scripted", "--script", script, "-w", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["outcome"] == "completed"
    assert data["text"] == "hi"
    assert data["usage"] == {"input_tokens": 3, "output_tokens": 1}
    assert [e["type"] for e in data["events"]] == ["run_started", "text_delta", "run_finished"]


def test_run_reaching_max_turns_exits_one_with_the_reason(tmp_path):
    turns = [{"tool_calls": [{"name": "list_dir", "arguments": {}}]}] * 3
    script = write_script(tmp_path, turns)
    done = neta(
        "run", "loop", "-p", "scripted", "--script", script, "-w", str(tmp_path), "--max-turns", "2"
    )
    assert done.returncode == 1
    assert "Run ended: max_turns: stopped after 2 turns" in done.stderr


def test_run_with_openai_and_no_key_is_a_one_line_config_error(tmp_path):
    done = neta("run", "hello", "-w", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith("Error: the openai provider needs an API key or a base URL")
    assert len(done.stderr.splitlines()) == 1


def test_unknown_provider_suggests_a_close_name(tmp_path):
    done = neta("run", "hello", "-p", "scriptd", "-w", str(tmp_path))
    assert done.returncode == 2
    assert "did you mean 'scripted'?" in done.stderr


def test_chat_keeps_history_between_messages(tmp_path):
    script = write_script(
        tmp_path,
        [
            {"text": "Nice to meet you, Ada."},
            {"text": "Your name is Ada.", "expect": {"last_message_contains": "my name"}},
        ],
    )
    done = neta(
        "chat",
        "-p",
        "scripted",
        "--script",
        script,
        "-w",
        str(tmp_path),
        input_text="I am Ada\nwhat is my name?\n/exit\n",
    )
    assert done.returncode == 0, done.stderr
    assert "Nice to meet you, Ada." in done.stdout
    assert "Your name is Ada." in done.stdout


def test_prompt_prints_the_system_prompt_for_base(tmp_path):
    done = neta("prompt", "-w", str(tmp_path), env_extra={"NETA_LOAD_PLUGINS": "base"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("You are Neta")
    assert "## patch" in done.stdout
    assert f"- Workspace: {tmp_path.resolve()}" in done.stdout


def test_prompt_for_a_crew_child_never_mentions_clarify_or_delegation(tmp_path):
    child = neta("prompt", "--entry", "crew", "-w", str(tmp_path))
    top = neta("prompt", "-w", str(tmp_path))
    assert child.returncode == 0, child.stderr
    assert "clarify" not in child.stdout
    assert "delegate_task" not in child.stdout
    assert "## escalate" in child.stdout
    assert "## clarify" in top.stdout
    assert "## delegate_task" in top.stdout
    assert re.search(r"\bescalate\b", top.stdout) is None  # the status "escalated" may appear
