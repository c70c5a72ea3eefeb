"""``neta run`` with the anthropic provider, in-process, against the fake API."""

import json

from neta import create_plugin_manager
from neta_anthropic import plugin
from tests.core.cli.cli_runner import neta_in_process
from tests.fake_anthropic import FakeAnthropic, Reply
from tests.services import neta_environ

KEY = "sk-ant-test"


def neta(*args, **env_extra):
    return neta_in_process(*args, env=neta_environ(**env_extra))


def patch_replies():
    patch_args = {"path": "config.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}
    return [
        Reply(
            tool_calls=[("read_file", json.dumps({"path": "config.py"}))], usage=(40, 9, 0, 1500)
        ),
        Reply(tool_calls=[("patch", json.dumps(patch_args))], usage=(30, 12, 1500, 0)),
        Reply(text="Debug is off.", usage=(20, 4, 1500, 0)),
    ]


def test_neta_run_completes_a_patch_run_with_provider_model_and_base_url(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "config.py").write_text("PORT = 8080\nDEBUG = True\n")
    with FakeAnthropic(patch_replies()) as server:
        done = neta(
            "run",
            "turn debug off in config.py",
            "--provider",
            "anthropic",
            "--model",
            "claude-test",
            "--base-url",
            server.base_url,
            "-w",
            str(workspace),
            "--mode",
            "auto-edit",
            ANTHROPIC_API_KEY=KEY,
        )
    assert done.returncode == 0, done.stderr
    assert (workspace / "config.py").read_text() == "PORT = 8080\nDEBUG = False\n"
    assert "→ read_file" in done.stderr
    assert "→ patch" in done.stderr
    assert done.stdout == "Debug is off.\n"
    assert [r["model"] for r in server.requests] == ["claude-test"] * 3
    assert done.stderr.splitlines()[-1].startswith(
        "3 turns, 2 tool calls, 4615 tokens (4590 in, 3000 cache read, 1500 cache write, 25 out)"
    )


def invoke(*args):
    """``neta ARGS`` in this process (the SDK is imported once), with the anthropic plugin."""
    from typer.testing import CliRunner

    from neta.cli.app import CliState, app

    pm = create_plugin_manager(load_entrypoints=False, plugins=[("anthropic", plugin)])
    return CliRunner().invoke(app, list(args), obj=CliState(pm))


def test_provider_prefixed_model_and_environment_url_are_enough(tmp_path, monkeypatch):
    with FakeAnthropic([Reply(text="hello from claude")]) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        done = invoke(
            "run", "hi", "--model", "anthropic:claude-test", "-w", str(tmp_path), "--json"
        )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["text"] == "hello from claude"
    assert server.requests[0]["model"] == "claude-test"


def test_rate_limit_is_shown_while_it_is_waited_out(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    limited = Reply(status=429, error_type="rate_limit_error", headers={"retry-after": "1"})
    with FakeAnthropic([limited, Reply(text="made it")]) as server:
        done = invoke(
            "run", "hi", "-m", "anthropic:claude-test", "--base-url", server.base_url,
            "-w", str(tmp_path),
        )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "rate limited, retrying in 1 s (try 2 of 4)" in done.stderr
    assert done.stdout == "made it\n"


def test_bad_key_ends_the_run_with_one_line_naming_provider_model_and_url(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "wrong")
    with FakeAnthropic([Reply(text="never")]) as server:
        done = invoke(
            "run", "hi", "-m", "anthropic:claude-test", "--base-url", server.base_url,
            "--max-tries", "5", "-w", str(tmp_path),
        )  # fmt: skip
    assert done.exit_code == 1
    assert done.stderr.splitlines()[0] == (
        f"Error: anthropic model 'claude-test' at {server.base_url}: "
        "model API answered 401: invalid API key"
    )
    assert len(done.stderr.splitlines()) == 2  # and the summary line
    assert len(server.requests) == 1


def test_max_tries_bounds_the_retries(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    busy = Reply(
        status=529, error_type="overloaded_error", text="busy", headers={"retry-after": "0"}
    )
    with FakeAnthropic([busy, busy, Reply(text="never")]) as server:
        done = invoke(
            "run", "hi", "-m", "anthropic:claude-test", "--base-url", server.base_url,
            "--max-tries", "2", "-w", str(tmp_path),
        )  # fmt: skip
    assert done.exit_code == 1
    assert "overloaded, retrying in 0.0 s (try 2 of 2)" in done.stderr
    assert done.stderr.splitlines()[-2].endswith(
        "model API answered 529: busy (gave up after 2 tries)"
    )
    assert len(server.requests) == 2


def test_neta_providers_lists_the_anthropic_provider_and_what_it_reads():
    done = neta("providers", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["anthropic"]["env_vars"] == [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_MODEL",
    ]
    assert rows["anthropic"]["source"].startswith("built-in plugin anthropic from neta")
    assert rows["anthropic"]["install"] == "pip install 'neta[anthropic]'"
    assert rows["openai"]["source"] == "core"
    assert rows["scripted"]["env_vars"] == []
