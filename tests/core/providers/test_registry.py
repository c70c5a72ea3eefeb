"""Providers come from the built-ins and from plugins' ``neta_providers`` hook."""

import asyncio

import pytest

import neta
from neta.providers.base import ModelResponse, ProviderSpec
from neta.providers.registry import create_provider, provider_specs
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
