"""What ``neta run`` says at the end: what is true, once, and soon."""

import json
import re

from tests.core.cli.cli_runner import neta_in_process
from tests.fake_openai import FakeOpenAI, Reply
from tests.services import free_port, neta_environ


def model_flags(base_url):
    return ["-p", "openai", "--base-url", base_url, "-m", "fake-model"]


def neta(*args, together=False):
    return neta_in_process(*args, env=neta_environ(OPENAI_API_KEY="k"), together=together)


def test_a_run_the_model_never_answered_says_how_long_it_took_not_zero_tokens(tmp_path):
    with FakeOpenAI([Reply(status=404, text="no such model")]) as server:
        done = neta("run", "hi", *model_flags(server.base_url), "-w", str(tmp_path))
    assert done.returncode == 1
    summary = done.stderr.splitlines()[-1]
    assert re.fullmatch(r"ended after \d+\.\d s; your message was not kept .*", summary)
    assert "token" not in done.stderr


def test_a_completed_run_counts_its_tokens(tmp_path):
    with FakeOpenAI([Reply(text="Hello.", usage=(10, 5))]) as server:
        done = neta("run", "hi", *model_flags(server.base_url), "-w", str(tmp_path))
    assert done.returncode == 0, done.stderr
    line = done.stderr.splitlines()[-1]
    assert re.fullmatch(r"1 turn, 0 tool calls, 15 tokens \(10 in, 5 out\), \d+\.\d s", line)


def test_the_answer_shows_once_when_stderr_goes_where_stdout_goes(tmp_path):
    (tmp_path / "notes.txt").write_text("a note\n")
    script = tmp_path / "script.json"
    turns = [
        {
            "text": "Reading the notes.",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}],
        },
        {"text": "The note says hello."},
    ]
    script.write_text(json.dumps({"turns": turns}))
    done = neta("run", "go", "--script", str(script), "-w", str(tmp_path), together=True)
    assert done.returncode == 0, done.stdout
    assert done.stdout.count("The note says hello.") == 1  # `2>&1`: the answer once
    assert done.stdout.count("Reading the notes.") == 1  # the text between calls still shows
    assert done.stdout.index("Reading the notes.") < done.stdout.index("→ read_file")


def test_a_connection_refused_on_loopback_fails_at_once_without_retrying(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/v1"  # nobody listens there
    done = neta("run", "hi", *model_flags(url), "-w", str(tmp_path), "--json")
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert "connection refused" in result["reason"]
    assert "gave up after" not in result["reason"]
    assert [e for e in result["events"] if e["type"] == "provider_retry"] == []
    assert "retrying" not in done.stderr
