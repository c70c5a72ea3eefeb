"""bash with ``--sandbox off``: the child gets the host's environment minus Neta's secrets and
provider credentials (a sandboxed one gets an allow list: ``test_bash_sandbox``)."""

import pytest

from neta_base import environment


@pytest.fixture(autouse=True)
def off(unsandboxed):
    """Every test here is about the unsandboxed environment."""


@pytest.fixture
def secrets_set(monkeypatch):
    values = {
        "NETA_TOKEN": "gateway-token",
        "OPENAI_API_KEY": "sk-openai",
        "ANTHROPIC_API_KEY": "sk-anthropic",
        "OPENROUTER_API_KEY": "sk-router",
        "SOME_VENDOR_API_KEY": "sk-vendor",
        "HARMLESS_SETTING": "visible",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("NETA_BASH_ENV_DENY", raising=False)
    monkeypatch.delenv("NETA_BASH_ENV_ALLOW", raising=False)
    return values


def echo(call, *names):
    command = "echo " + " ".join(f'"{name}=${{{name}-unset}}"' for name in names)
    return call("bash", command=command).content.splitlines()[0].split()


def test_bash_does_not_pass_the_gateway_token_or_provider_keys(call, secrets_set):
    assert echo(
        call,
        "NETA_TOKEN",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "OPENROUTER_API_KEY",
        "SOME_VENDOR_API_KEY",
        "HARMLESS_SETTING",
    ) == [
        "NETA_TOKEN=unset",
        "OPENAI_API_KEY=unset",
        "ANTHROPIC_API_KEY=unset",
        "OPENROUTER_API_KEY=unset",
        "SOME_VENDOR_API_KEY=unset",
        "HARMLESS_SETTING=visible",
    ]


def test_bash_env_listing_shows_no_secret_value(call, secrets_set):
    listing = call("bash", command="env").content
    for name in ("NETA_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        assert secrets_set[name] not in listing


def test_host_denies_more_and_allows_a_provider_key_through_session_extras(
    call, session, secrets_set
):
    session.extras[environment.DENY_KEY] = ["HARMLESS_SETTING"]
    session.extras[environment.ALLOW_KEY] = ["OPENAI_API_KEY", "NETA_TOKEN"]
    assert echo(call, "OPENAI_API_KEY", "NETA_TOKEN", "HARMLESS_SETTING") == [
        "OPENAI_API_KEY=sk-openai",
        "NETA_TOKEN=unset",
        "HARMLESS_SETTING=unset",
    ]


def test_host_changes_the_lists_through_environment_variables(call, monkeypatch, secrets_set):
    monkeypatch.setenv("NETA_BASH_ENV_DENY", "HARMLESS_*")
    monkeypatch.setenv("NETA_BASH_ENV_ALLOW", "ANTHROPIC_API_KEY,NETA_TOKEN")
    assert echo(call, "ANTHROPIC_API_KEY", "NETA_TOKEN", "HARMLESS_SETTING") == [
        "ANTHROPIC_API_KEY=sk-anthropic",
        "NETA_TOKEN=unset",
        "HARMLESS_SETTING=unset",
    ]


def test_child_environment_never_holds_neta_token_whatever_is_allowed():
    env = environment.child_environment({"NETA_TOKEN": "t", "PATH": "/bin"}, allow=["*"], deny=[])
    assert "NETA_TOKEN" not in env
    assert env["PATH"] == "/bin"
