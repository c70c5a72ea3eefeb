"""Fallback between providers through both real SDKs: the history goes over as it is."""

import asyncio
import json

import neta
from neta.events import ModelFallback
from neta.providers.retry import RetryPolicy
from neta_anthropic import plugin
from tests.core.runtime import kit
from tests.fake_anthropic import FakeAnthropic
from tests.fake_anthropic import Reply as AnthropicReply
from tests.fake_openai import FakeOpenAI
from tests.fake_openai import Reply as OpenAIReply

KEY = "sk-ant-test"


def agent(tmp_path, models, **options):
    pm = neta.create_plugin_manager(
        load_entrypoints=False, plugins=[("anthropic", plugin), ("kit", kit)]
    )
    return neta.Agent(
        permissions="auto",
        model=models,
        plugin_manager=pm,
        workspace=tmp_path,
        retry=RetryPolicy(max_tries=2, base_delay=0, jitter=0),
        **options,
    )


def fell_back(result):
    return [(e.failed, e.model, e.reason) for e in result.events if isinstance(e, ModelFallback)]


def test_a_bad_anthropic_key_falls_back_to_openai_and_says_so(tmp_path, monkeypatch):
    with FakeAnthropic([]) as claude, FakeOpenAI([OpenAIReply(text="From GPT.")]) as gpt:
        monkeypatch.setenv("OPENAI_BASE_URL", gpt.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
        runner = agent(
            tmp_path,
            ["anthropic:claude-test", "openai:fake-model"],
            provider_options={"base_url": claude.base_url, "api_key": "sk-ant-wrong"},
        )
        result = asyncio.run(runner.run("hello"))
    assert result.text == "From GPT."
    assert len(claude.requests) == 1  # a bad key is not retried
    sent = claude.headers[0]
    assert "sk-ant-wrong" in sent.get("x-api-key", "") + sent.get("authorization", "")
    [asked] = gpt.requests
    assert asked["model"] == "fake-model"
    assert gpt.authorizations == ["Bearer sk-openai"]  # its own key, from its environment
    assert asked["messages"][-1] == {"role": "user", "content": "hello"}
    assert fell_back(result) == [
        ("anthropic:claude-test", "openai:fake-model", "authentication failed (401)")
    ]


def test_an_overloaded_claude_midway_hands_the_whole_history_to_openai(tmp_path, monkeypatch):
    overloaded = AnthropicReply(status=529, error_type="overloaded_error", text="Overloaded")
    claude_replies = [
        AnthropicReply(text="Echoing.", tool_calls=[("echo", json.dumps({"text": "hi"}))]),
        overloaded,
        overloaded,
    ]
    with FakeAnthropic(claude_replies) as claude, FakeOpenAI([OpenAIReply(text="Done.")]) as gpt:
        monkeypatch.setenv("OPENAI_BASE_URL", gpt.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
        runner = agent(
            tmp_path,
            ["anthropic:claude-test", "openai:fake-model"],
            provider_options={"base_url": claude.base_url, "api_key": KEY},
        )
        result = asyncio.run(runner.run("echo hi"))
    assert result.outcome == "completed", result.reason
    assert result.text == "Done."
    assert len(claude.requests) == 3  # the answer, then the overloaded turn tried twice
    assert gpt.rejected == []  # the history Claude started is one the OpenAI API accepts
    roles = [m["role"] for m in gpt.requests[0]["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    assistant, tool = gpt.requests[0]["messages"][2:]
    assert assistant["tool_calls"][0]["function"] == {"name": "echo", "arguments": '{"text": "hi"}'}
    assert tool == {"role": "tool", "content": "echo: hi", "tool_call_id": "toolu_0"}
    assert fell_back(result) == [("anthropic:claude-test", "openai:fake-model", "overloaded")]


def test_openai_failing_for_good_falls_back_to_claude(tmp_path, monkeypatch):
    with (
        FakeOpenAI([OpenAIReply(status=404, text="no such model")]) as gpt,
        FakeAnthropic([AnthropicReply(text="From Claude.")]) as claude,
    ):
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        runner = agent(
            tmp_path,
            ["openai:gone-model", "anthropic:claude-test"],
            provider_options={"base_url": gpt.base_url, "api_key": "k"},
        )
        result = asyncio.run(runner.run("hi"))
    assert result.text == "From Claude."
    assert claude.requests[0]["model"] == "claude-test"
    assert claude.requests[0]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    ]
    assert fell_back(result) == [
        ("openai:gone-model", "anthropic:claude-test", "model not found (404)")
    ]
