"""Chat spans of the openai provider, through the real SDK against the fake server."""

import asyncio

import pytest

import neta
from neta.providers.retry import RetryPolicy
from neta.runtime.agent import Agent
from tests.core.runtime import kit
from tests.core.tracing.spans_kit import attrs, failed, named, one
from tests.fake_openai import FakeOpenAI, Reply


def openai_agent(server, tmp_path, *, stream=True):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    return Agent(
        provider="openai",
        model="fake-model",
        provider_options={"base_url": server.base_url, "api_key": "sk-test", "stream": stream},
        plugin_manager=pm,
        workspace=tmp_path,
        permissions="auto",
        retry=RetryPolicy(max_tries=1),
    )


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "whole"])
def test_an_openai_chat_span_names_the_provider_the_models_and_the_usage(tmp_path, spans, stream):
    replies = [Reply(tool_calls=[("echo", '{"text": "x"}')], usage=(30, 4)), Reply(text="done")]
    with FakeOpenAI(replies) as server:
        result = asyncio.run(openai_agent(server, tmp_path, stream=stream).run("go"))
    assert result.outcome == "completed", result.reason
    first, _ = named(spans, "chat")
    assert first.name == "chat fake-model"
    assert attrs(first) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.system": "openai",
        "gen_ai.conversation.id": result.session_id,
        "gen_ai.request.model": "fake-model",
        "gen_ai.response.model": "fake-model",
        "gen_ai.response.id": "chatcmpl-fake",
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": 30,
        "gen_ai.usage.output_tokens": 4,
    }
    assert attrs(one(spans, "invoke_agent"))["gen_ai.provider.name"] == "openai"


def test_the_response_model_is_the_one_the_server_says_answered(tmp_path, spans):
    chunk = {
        "id": "chatcmpl-42",
        "model": "fake-model-2026-01-01",
        "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 1, "prompt_tokens_details": {}},
    }
    with FakeOpenAI([Reply(raw_chunks=[chunk])]) as server:
        result = asyncio.run(openai_agent(server, tmp_path).run("go"))
    assert result.text == "hi"
    chat = one(spans, "chat")
    assert attrs(chat)["gen_ai.request.model"] == "fake-model"
    assert attrs(chat)["gen_ai.response.model"] == "fake-model-2026-01-01"
    assert attrs(chat)["gen_ai.response.id"] == "chatcmpl-42"
    assert attrs(chat)["gen_ai.response.finish_reasons"] == ("stop",)


def test_an_openai_error_answer_fails_the_chat_span_with_its_status(tmp_path, spans):
    with FakeOpenAI([Reply(status=404, text="no such model")]) as server:
        result = asyncio.run(openai_agent(server, tmp_path).run("go"))
    assert result.outcome == "error"
    chat = one(spans, "chat")
    assert failed(chat)
    assert attrs(chat)["error.type"] == "404"
    assert "gen_ai.response.model" not in attrs(chat)
