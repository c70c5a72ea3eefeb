"""``neta models``: the models a provider's API lists, and a default model's 404 said as such."""

import json

from tests.core.cli.cli_runner import neta_in_process
from tests.fake_openai import FakeOpenAI, Reply
from tests.services import neta_environ


def env(server, tmp_path, **extra):
    return neta_environ(
        NETA_HOME=str(tmp_path / "home"),
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_KEY="sk-test",
        **extra,
    )


def test_models_lists_what_the_providers_api_lists(tmp_path):
    with FakeOpenAI() as server:
        done = neta_in_process("models", env=env(server, tmp_path))
        as_json = neta_in_process("models", "--json", env=env(server, tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["fake-model", "fake-model-mini"]
    assert json.loads(as_json.stdout) == ["fake-model", "fake-model-mini"]


def test_models_of_a_provider_without_a_list_says_so(tmp_path):
    script = tmp_path / "script.json"
    script.write_text('{"turns": [{"text": "hi"}]}')
    done = neta_in_process("models", "--script", str(script), env=neta_environ())
    assert done.returncode == 1
    assert "scripted" in done.stderr
    assert "no model list" in done.stderr


def test_a_default_model_the_server_does_not_know_is_named_as_the_default(tmp_path):
    with FakeOpenAI([Reply(status=404, text="The model `gpt-4o-mini` does not exist")]) as server:
        environ = {k: v for k, v in env(server, tmp_path).items() if k != "OPENAI_MODEL"}
        done = neta_in_process("run", "hello", "--max-tries", "1", env=environ)
    assert done.returncode == 1
    assert "the default model" in done.stderr
    assert "-m" in done.stderr
    assert "OPENAI_MODEL" in done.stderr
    assert "neta models" in done.stderr


def test_a_model_the_user_chose_is_not_called_the_default(tmp_path):
    with FakeOpenAI([Reply(status=404, text="no such model")]) as server:
        done = neta_in_process(
            "run", "hello", "-m", "my-model", "--max-tries", "1", env=env(server, tmp_path)
        )
    assert done.returncode == 1
    assert "the default model" not in done.stderr


def test_models_lists_what_the_anthropic_api_lists(tmp_path):
    from tests.fake_anthropic import FakeAnthropic

    with FakeAnthropic() as server:
        environ = neta_environ(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="sk-ant-test")
        done = neta_in_process("models", "--provider", "anthropic", env=environ)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["claude-fake", "claude-fake-mini"]
