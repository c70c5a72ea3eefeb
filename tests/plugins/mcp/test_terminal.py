"""An MCP server's elicitation and progress at the terminal, through ``neta chat``."""

import json

from tests.core.cli.cli_runner import neta_in_process
from tests.plugins.mcp.conftest import write_config
from tests.services import neta_environ


def neta_env_for(home):
    return neta_environ(NETA_HOME=str(home))


def test_neta_chat_asks_a_server_elicitation_at_the_prompt_and_shows_progress(
    workspace, neta_home, asking, tmp_path
):
    write_config(neta_home / "mcp.json", {"asker": {"url": asking.url}})
    script = tmp_path / "script.json"
    turns = [
        {"tool_calls": [{"name": "count_up", "arguments": {"steps": 2}}]},
        {"tool_calls": [{"name": "pick_colour", "arguments": {}}]},
        {"text": "Green it is.", "expect": {"last_message_contains": "painting the shed green"}},
    ]
    script.write_text(json.dumps({"turns": turns}))
    done = neta_in_process(
        "chat", "-p", "scripted", "--script", str(script), "-w", str(workspace), "--mode", "auto",
        input_text="paint the shed\n2\n/exit\n", env=neta_env_for(neta_home), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "MCP server 'asker' asks: Which colour for the shed?" in done.stderr
    assert "  2. green" in done.stderr
    assert "count_up 1/2 (50%) step 1" in done.stderr
    assert "Green it is." in done.stdout


def test_neta_chat_shows_a_server_question_on_the_one_line_that_names_the_server(
    workspace, neta_home, asking, tmp_path
):
    write_config(neta_home / "mcp.json", {"asker": {"url": asking.url}})
    script = tmp_path / "script.json"
    turns = [
        {"tool_calls": [{"name": "deploy", "arguments": {}}]},
        {"text": "Done.", "expect": {"last_message_contains": "deploy confirmed=False"}},
    ]
    script.write_text(json.dumps({"turns": turns}))
    done = neta_in_process(
        "chat", "-p", "scripted", "--script", str(script), "-w", str(workspace), "--mode", "auto",
        input_text="deploy it\n2\n/exit\n", cwd=tmp_path,
        env={**neta_env_for(neta_home), "COLUMNS": "400"},  # a line as wide as the question
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [question] = [line for line in done.stderr.splitlines() if "asks:" in line]
    assert question.startswith("? MCP server 'asker' asks: Deploy?\\n\\n")
    assert question.endswith("MCP server 'github' asks: paste your token")
