"""A stored conversation keeps the model it talks to: ``-c`` and ``--session`` ask it again,
``neta logs`` shows it, and a message the model never answered is not sent twice."""

import json
import socket
import sqlite3

import pytest

from neta.cli.conversations import Conversations
from neta.home import neta_home
from tests.core.cli.cli_runner import neta_in_process
from tests.fake_openai import FakeOpenAI, Reply
from tests.services import neta_environ

MODEL = "scenario-model"
KEY = "sk-never-stored-0123456789"


def closed_port_url() -> str:
    """A loopback URL nothing listens on: where a run without the stored base URL would go."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{closed.getsockname()[1]}/v1"


@pytest.fixture
def environ():
    # the key comes from the environment each time; the default base URL leads nowhere
    return neta_environ(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=closed_port_url())


def neta(environ, *args, input_text=None, cwd=None):
    return neta_in_process(*args, input_text=input_text, env=environ, cwd=cwd)


def users(request):
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def test_run_continue_asks_the_model_and_server_the_conversation_started_with(tmp_path, environ):
    with FakeOpenAI([Reply(text="Hi."), Reply(text="Again.")]) as server:
        first = neta(
            environ, "run", "hello", "-m", MODEL, "--base-url", server.base_url,
            "--max-tries", "1", "-w", str(tmp_path), "--json",
        )  # fmt: skip
        assert first.returncode == 0, first.stderr
        again = neta(environ, "run", "-c", "again", "--max-tries", "1", "-w", str(tmp_path))
        assert again.returncode == 0, again.stderr
        assert again.stdout == "Again.\n"
        assert [request["model"] for request in server.requests] == [MODEL, MODEL]
        assert server.rejected == []


def test_run_session_asks_the_stored_model_from_another_directory(tmp_path, environ):
    with FakeOpenAI([Reply(text="Hi."), Reply(text="Again.")]) as server:
        first = neta(
            environ, "run", "hello", "-m", MODEL, "--base-url", server.base_url,
            "-w", str(tmp_path), "--json",
        )  # fmt: skip
        session_id = json.loads(first.stdout)["session_id"]
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        again = neta(
            environ, "run", "--session", session_id, "again", "--max-tries", "1", cwd=elsewhere
        )
        assert again.returncode == 0, again.stderr
        assert server.requests[1]["model"] == MODEL


def test_chat_continue_asks_the_model_the_conversation_started_with(tmp_path, environ):
    with FakeOpenAI([Reply(text="Hi."), Reply(text="Again.")]) as server:
        first = neta(
            environ, "chat", "-m", MODEL, "--base-url", server.base_url, "-w", str(tmp_path),
            input_text="hello\n",
        )  # fmt: skip
        assert first.returncode == 0, first.stderr
        again = neta(environ, "chat", "-c", "-w", str(tmp_path), input_text="again\n")
        assert again.returncode == 0, again.stderr
        assert "Again." in again.stdout
        assert [request["model"] for request in server.requests] == [MODEL, MODEL]
        assert users(server.requests[1]) == ["hello", "again"]
        assert server.rejected == []


def test_a_message_the_model_never_answered_is_not_kept_nor_sent_twice(tmp_path, environ):
    replies = [
        Reply(text="Hi."),
        Reply(status=404, text=f"The model {MODEL} does not exist"),
        Reply(text="Now I answer."),
    ]
    with FakeOpenAI(replies) as server:
        flags = ["--base-url", server.base_url, "--max-tries", "1", "-w", str(tmp_path)]
        assert neta(environ, "run", "hello", "-m", MODEL, *flags).returncode == 0
        failed = neta(environ, "run", "-c", "again", *flags)
        assert failed.returncode == 1
        assert "Error: " in failed.stderr
        assert "your message was not kept" in failed.stderr
        [row] = json.loads(neta(environ, "logs", "--json").stdout)
        assert row["outcome"] == "error"
        shown = json.loads(neta(environ, "logs", "show", row["session_id"], "--json").stdout)
        assert [m["role"] for m in shown["messages"]] == ["user", "assistant"]

        done = neta(environ, "run", "-c", "again", *flags)
        assert done.returncode == 0, done.stderr
        assert users(server.requests[2]) == ["hello", "again"]
        shown = json.loads(neta(environ, "logs", "show", row["session_id"], "--json").stdout)
        assert [m["role"] for m in shown["messages"]] == ["user", "assistant"] * 2
        assert server.rejected == []


def test_model_flags_given_when_going_on_win_and_are_kept_once_the_model_answers(tmp_path, environ):
    replies = [Reply(text="Hi."), Reply(status=404, text="no such model"), Reply(text="Yes.")]
    with FakeOpenAI(replies) as server:
        flags = ["--base-url", server.base_url, "--max-tries", "1", "-w", str(tmp_path)]
        assert neta(environ, "run", "hello", "-m", MODEL, *flags).returncode == 0
        assert neta(environ, "run", "-c", "x", "-m", "no-such-model", *flags).returncode == 1
        [row] = json.loads(neta(environ, "logs", "--json").stdout)
        assert row["model"] == MODEL  # the model that failed did not replace it
        assert neta(environ, "run", "-c", "y", "-m", "openai:other-model", *flags).returncode == 0
        [row] = json.loads(neta(environ, "logs", "--json").stdout)
        assert row["model"] == "other-model"
        assert [request["model"] for request in server.requests] == [
            MODEL,
            "no-such-model",
            "other-model",
        ]


def test_another_provider_given_when_going_on_leaves_the_stored_model_out(tmp_path, environ):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "scripted"}]}))
    with FakeOpenAI([Reply(text="Hi.")]) as server:
        flags = ["--base-url", server.base_url, "-w", str(tmp_path)]
        assert neta(environ, "run", "hello", "-m", MODEL, *flags).returncode == 0
    done = neta(environ, "run", "-c", "more", "--script", str(script), "-w", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "scripted\n"
    [row] = json.loads(neta(environ, "logs", "--json").stdout)
    assert (row["provider"], row["model"], row["base_url"]) == ("scripted", "", "")


def test_logs_show_each_conversations_model_and_never_its_key(tmp_path, environ):
    with FakeOpenAI([Reply(text="Hi.")]) as server:
        flags = ["--base-url", server.base_url, "-w", str(tmp_path)]
        assert neta(environ, "run", "hello", "-m", MODEL, *flags).returncode == 0
    [row] = json.loads(neta(environ, "logs", "--json").stdout)
    assert (row["provider"], row["model"], row["base_url"]) == ("openai", MODEL, server.base_url)
    table = neta({**environ, "COLUMNS": "250"}, "logs")
    assert f"openai:{MODEL}" in table.stdout
    shown = neta(environ, "logs", "show", row["session_id"])
    assert f"openai:{MODEL} at {server.base_url}" in shown.stdout.splitlines()[0]
    for path in neta_home().glob("neta.db*"):
        assert KEY.encode() not in path.read_bytes()


def test_a_base_url_holding_credentials_is_not_stored():
    from neta.cli.conversations import ModelChoice

    assert ModelChoice.of("openai", "m", "https://user:secret@example.test/v1").base_url == ""
    assert ModelChoice.of("openai", "m", "https://example.test/v1?api-key=s").base_url == ""
    assert (
        ModelChoice.of("openai", "m", "http://127.0.0.1:8/v1").base_url == "http://127.0.0.1:8/v1"
    )


def test_a_conversation_stored_before_models_were_kept_goes_on_with_the_flags(tmp_path, environ):
    conversations = Conversations()
    conversations.close()
    path = neta_home() / "neta.db"
    with sqlite3.connect(path) as db:  # the table as an earlier version made it
        db.execute("DROP TABLE cli_runs")
        db.execute(
            "CREATE TABLE cli_runs (session_id TEXT PRIMARY KEY, workspace TEXT NOT NULL, "
            "command TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL, "
            "first_prompt TEXT NOT NULL, outcome TEXT NOT NULL, question TEXT NOT NULL "
            "DEFAULT '', turns INTEGER NOT NULL DEFAULT 0, input_tokens INTEGER NOT NULL "
            "DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0)"
        )
        db.execute(
            "INSERT INTO cli_runs (session_id, workspace, command, created, updated, "
            "first_prompt, outcome) VALUES ('old0', ?, 'run', 1, 1, 'hello', 'completed')",
            (str(tmp_path.resolve()),),
        )
        db.execute(
            "INSERT INTO sessions (id, entry, created, updated) VALUES ('old0', 'cli', 1, 1)"
        )
    [row] = json.loads(neta(environ, "logs", "--json").stdout)
    assert (row["session_id"], row["provider"], row["model"]) == ("old0", "", "")
    assert "?" in neta(environ, "logs").stdout
    with FakeOpenAI([Reply(text="Still here.")]) as server:
        done = neta(
            environ, "run", "-c", "more", "-m", MODEL, "--base-url", server.base_url,
            "-w", str(tmp_path),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [row] = json.loads(neta(environ, "logs", "--json").stdout)
    assert (row["provider"], row["model"]) == ("openai", MODEL)
