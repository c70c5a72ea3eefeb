"""Providers come from the built-ins and from plugins' ``neta_providers`` hook."""

import asyncio
import sys

import pytest

import neta
from neta.providers.base import ModelResponse, ProviderSpec
from neta.providers.registry import (
    create_provider,
    provider_entries,
    provider_specs,
    split_model_name,
)
from neta.runtime.agent import Agent


class Parrot:
    """A provider that repeats the last user message."""

    def __init__(self, model: str = "", prefix: str = "") -> None:
        self.model = model
        self.prefix = prefix

    async def complete(self, request, on_text):
        text = self.prefix + (request.messages[-1].content or "")
        on_text(text)
        return ModelResponse(text=text)


class ParrotPlugin:
    @neta.hookimpl
    def neta_providers(self):
        return [ProviderSpec(name="parrot", description="Repeats you.", factory=Parrot)]


class Impostor:
    @neta.hookimpl
    def neta_providers(self):
        return [ProviderSpec(name="openai", factory=Parrot)]


def test_plugin_provider_is_created_by_name_with_options(make_pm, tmp_path):
    pm = make_pm(parrot=ParrotPlugin())
    agent = Agent(
        provider="parrot",
        plugin_manager=pm,
        workspace=tmp_path,
        provider_options={"prefix": "echo: "},
    )
    result = asyncio.run(agent.run("hello"))
    assert result.text == "echo: hello"


def test_plugin_cannot_replace_a_builtin_provider(make_pm):
    pm = make_pm(impostor=Impostor())
    specs = provider_specs(pm)
    assert specs["openai"].description == "OpenAI-compatible Chat Completions"
    [problem] = pm.problems
    assert "provider 'openai' is already registered" in str(problem)
    assert problem.plugin == "impostor"


def test_unknown_provider_suggests_close_names(make_pm):
    with pytest.raises(neta.ConfigError, match="did you mean 'scripted'"):
        create_provider("scriptd", make_pm())


def test_scripted_provider_by_name_needs_a_script(make_pm):
    with pytest.raises(neta.ConfigError, match="needs a script"):
        create_provider("scripted", make_pm())


def test_agent_without_provider_builds_sessions_but_refuses_to_run(make_pm, tmp_path):
    agent = Agent(provider=None, plugin_manager=make_pm(), workspace=tmp_path)
    session = agent.new_session()
    with pytest.raises(neta.ConfigError, match="no model provider"):
        asyncio.run(agent.run("hi", session=session))


def test_provider_model_name_picks_the_provider_and_sends_the_bare_model(make_pm, tmp_path):
    agent = Agent(
        model="parrot:polly-2",
        plugin_manager=make_pm(parrot=ParrotPlugin()),
        workspace=tmp_path,
        provider_options={"prefix": "> "},
    )
    assert isinstance(agent.provider, Parrot)
    assert agent.provider.model == "polly-2"
    assert agent.model == "polly-2"
    assert asyncio.run(agent.run("hi")).text == "> hi"


def test_provider_and_a_matching_prefix_agree(make_pm, tmp_path):
    pm = make_pm(parrot=ParrotPlugin())
    agent = Agent(provider="parrot", model="parrot:polly", plugin_manager=pm, workspace=tmp_path)
    assert agent.model == "polly"


def test_provider_and_a_different_prefix_are_refused(make_pm, tmp_path):
    pm = make_pm(parrot=ParrotPlugin())
    with pytest.raises(neta.ConfigError, match="names provider 'parrot' but the provider given"):
        Agent(provider="openai", model="parrot:polly", plugin_manager=pm, workspace=tmp_path)


def test_a_colon_that_names_no_provider_stays_part_of_the_model(make_pm):
    specs = provider_specs(make_pm())
    assert split_model_name("qwen2.5-coder:7b", specs) == (None, "qwen2.5-coder:7b")
    assert split_model_name("openai:gpt-4o", specs) == ("openai", "gpt-4o")
    assert split_model_name("openai:", specs) == (None, "openai:")


def test_agent_without_provider_or_prefix_has_no_provider(make_pm, tmp_path):
    agent = Agent(model="llama3:8b", plugin_manager=make_pm(), workspace=tmp_path)
    assert agent.provider is None
    assert agent.model == "llama3:8b"


def test_provider_entries_say_where_each_provider_comes_from(make_pm):
    entries = {e.spec.name: e for e in provider_entries(make_pm(parrot=ParrotPlugin()))}
    assert entries["openai"].source == "core"
    assert entries["openai"].spec.env_vars == ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL")
    assert entries["parrot"].source == "plugin parrot"


def test_openai_without_a_key_or_a_url_is_refused_before_its_sdk_loads(make_pm, monkeypatch):
    # the SDK takes about a second to import: a command missing both says so at once
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setitem(sys.modules, "neta.providers.openai_compat", None)  # cannot be imported
    with pytest.raises(neta.ConfigError, match="openai provider needs an API key or a base URL"):
        create_provider("openai", make_pm(), model="gpt-x")
    with pytest.raises(ImportError):  # given either, the provider is made (here: cannot be)
        create_provider("openai", make_pm(), base_url="http://127.0.0.1:9/v1")


def test_provider_endpoint_takes_what_is_given_then_the_environment(monkeypatch):
    names = {"base_url_var": "ECHO_URL", "api_key_var": "ECHO_KEY", "missing": "echo needs a key"}
    monkeypatch.setenv("ECHO_URL", "")  # empty counts as unset
    monkeypatch.delenv("ECHO_KEY", raising=False)
    with pytest.raises(neta.ConfigError, match=r"^echo needs a key$"):
        neta.provider_endpoint(None, None, **names)
    monkeypatch.setenv("ECHO_KEY", "from-env")
    assert neta.provider_endpoint(None, None, **names) == (None, "from-env")
    assert neta.provider_endpoint("http://h/v1", "given", **names) == ("http://h/v1", "given")
    monkeypatch.setenv("ECHO_URL", "http://env/v1")
    assert neta.provider_endpoint(None, None, **names) == ("http://env/v1", "from-env")
