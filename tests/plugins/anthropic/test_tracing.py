"""Chat spans of the anthropic provider, through the real SDK against the fake Messages API."""

import asyncio
import json

import pytest

import neta
from neta.providers.retry import RetryPolicy
from neta_anthropic import plugin
from tests.core.runtime import kit
from tests.core.tracing.spans_kit import attrs, failed, named, one, spans
from tests.fake_anthropic import FakeAnthropic, Reply

__all__ = ["spans"]  # the fixture


def kit_agent(server, tmp_path, *, stream=True):
    pm = neta.create_plugin_manager(
        load_entrypoints=False, plugins=[("anthropic", plugin), ("kit", kit)]
    )
    return neta.Agent(
        permissions="auto",
        model="anthropic:claude-test",
        plugin_manager=pm,
        workspace=tmp_path,
        provider_options={"base_url": server.base_url, "api_key": server.api_key, "stream": stream},
        retry=RetryPolicy(max_tries=1),
    )


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "whole"])
def test_an_anthropic_chat_span_names_the_provider_the_models_and_the_usage(
    tmp_path, spans, stream
):
    replies = [
        Reply(tool_calls=[("echo", json.dumps({"text": "x"}))], usage=(40, 6, 30, 2)),
        Reply(text="done"),
    ]
    with FakeAnthropic(replies) as server:
        result = asyncio.run(kit_agent(server, tmp_path, stream=stream).run("go"))
    assert result.outcome == "completed", result.reason
    first, second = named(spans, "chat")
    assert first.name == "chat claude-test"
    assert attrs(first) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.system": "anthropic",
        "gen_ai.conversation.id": result.session_id,
        "gen_ai.request.model": "claude-test",
        "gen_ai.response.model": "claude-test",
        "gen_ai.response.id": "msg_fake",
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": 72,
        "gen_ai.usage.output_tokens": 6,
        "gen_ai.usage.cache_read.input_tokens": 30,
        "gen_ai.usage.cache_creation.input_tokens": 2,
    }
    assert attrs(second)["gen_ai.response.finish_reasons"] == ("stop",)
    run = one(spans, "invoke_agent")
    assert attrs(run)["gen_ai.provider.name"] == "anthropic"
    assert attrs(run)["gen_ai.request.model"] == "claude-test"


def test_an_anthropic_error_answer_fails_the_chat_span_with_its_status(tmp_path, spans):
    with FakeAnthropic(
        [Reply(status=400, error_type="invalid_request_error", text="no")]
    ) as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("go"))
    assert result.outcome == "error"
    chat = one(spans, "chat")
    assert failed(chat)
    assert attrs(chat)["error.type"] == "400"
