"""The openai provider through the real SDK against a fake server on a loopback port."""

import asyncio

import pytest

import neta
from neta.events import ToolResultEvent
from neta.messages import Message
from neta.providers.base import ModelRequest
from neta.providers.openai_compat import OpenAIProvider
from neta.runtime.agent import Agent
from tests.core.runtime import kit
from tests.fake_openai import FakeOpenAI, Reply


def request(text="hi", tools=None):
    return ModelRequest(messages=[Message(role="user", content=text)], tools=tools or [], model="m")


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "whole"])
def test_text_and_tool_calls_come_back_whole(stream):
    reply = Reply(
        text="Let me check.", tool_calls=[("echo", '{"text": "hello world"}')], usage=(12, 7)
    )
    with FakeOpenAI([reply]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, stream=stream, max_retries=0)
        pieces = []
        response = asyncio.run(provider.complete(request(), pieces.append))
    assert response.text == "Let me check."
    assert "".join(pieces) == "Let me check."
    [tool_call] = response.tool_calls
    assert (tool_call.name, tool_call.arguments) == ("echo", '{"text": "hello world"}')
    assert tool_call.id == "call_0"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 7)
    assert server.requests[0]["messages"] == [{"role": "user", "content": "hi"}]
    assert server.requests[0]["model"] == "m"
    assert bool(server.requests[0].get("stream")) is stream


def test_streaming_sends_text_in_pieces():
    with FakeOpenAI([Reply(text="one two three")]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, max_retries=0)
        pieces = []
        asyncio.run(provider.complete(request(), pieces.append))
    assert pieces == ["one ", "two ", "three"]


def test_rate_limit_is_retried_with_backoff_then_succeeds():
    with FakeOpenAI([Reply(status=429, text="slow down"), Reply(text="fine")]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, max_retries=2)
        response = asyncio.run(provider.complete(request(), lambda _: None))
    assert response.text == "fine"
    assert len(server.requests) == 2


def test_client_error_is_a_non_retryable_provider_error():
    with FakeOpenAI([Reply(status=400, text="bad tool schema")]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, max_retries=2)
        with pytest.raises(neta.ProviderError, match="400: bad tool schema") as caught:
            asyncio.run(provider.complete(request(), lambda _: None))
    assert caught.value.retryable is False
    assert len(server.requests) == 1


def test_server_error_after_retries_is_retryable():
    with FakeOpenAI([Reply(status=503, text="busy")] * 2) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, max_retries=1)
        with pytest.raises(neta.ProviderError) as caught:
            asyncio.run(provider.complete(request(), lambda _: None))
    assert caught.value.retryable is True


def test_no_key_and_no_url_is_a_clear_config_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(neta.ConfigError, match="needs an API key or a base URL"):
        OpenAIProvider("m")


def test_base_url_and_key_come_from_the_environment(monkeypatch):
    with FakeOpenAI([Reply(text="env works")]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        response = asyncio.run(
            OpenAIProvider("m", max_retries=0).complete(request(), lambda _: None)
        )
    assert response.text == "env works"


def kit_agent(server, tmp_path, **options):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    return Agent(
        provider="openai",
        model="fake-model",
        plugin_manager=pm,
        workspace=tmp_path,
        provider_options={"base_url": server.base_url, "api_key": "sk-test", "max_retries": 0},
        **options,
    )


def test_end_to_end_bad_json_then_recovery_through_the_sdk(tmp_path):
    replies = [
        Reply(tool_calls=[("echo", '{"text": ')]),
        Reply(tool_calls=[("echo", '{"text": "second try"}')]),
        Reply(text="Recovered."),
    ]
    with FakeOpenAI(replies) as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("echo something"))
    assert result.outcome == "completed"
    assert result.text == "Recovered."
    bad, good = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert "not valid JSON" in bad.content
    assert good.content == "echo: second try"
    # the model was shown its error, tied to its own call id
    tool_message = server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["tool_call_id"] == "call_0"
    assert "not valid JSON" in tool_message["content"]
    assert (result.usage.input_tokens, result.usage.output_tokens) == (30, 15)


def test_end_to_end_unknown_tool_through_the_sdk(tmp_path):
    with FakeOpenAI([Reply(tool_calls=[("delete_everything", "{}")]), Reply(text="ok")]) as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("go"))
    [event] = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert "unknown tool 'delete_everything'" in event.content
    assert "Available tools:" in event.content
    assert server.requests[0]["tools"][0]["function"]["name"] == "echo"


def test_end_to_end_tool_timeout_through_the_sdk(tmp_path):
    replies = [Reply(tool_calls=[("quick", '{"seconds": 10}')]), Reply(text="moved on")]
    with FakeOpenAI(replies) as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("go"))
    [event] = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert "timed out after 0.2 s" in event.content
    assert result.text == "moved on"


def test_end_to_end_max_turns_through_the_sdk(tmp_path):
    replies = [Reply(tool_calls=[("echo", '{"text": "again"}')]) for _ in range(3)]
    with FakeOpenAI(replies) as server:
        result = asyncio.run(kit_agent(server, tmp_path, max_turns=2).run("loop forever"))
    assert result.outcome == "max_turns"
    assert len(server.requests) == 2


def test_strict_schemas_are_sent_when_asked(tmp_path):
    with FakeOpenAI([Reply(text="ok")]) as server:
        asyncio.run(kit_agent(server, tmp_path, strict_schemas=True).run("go"))
    function = server.requests[0]["tools"][0]["function"]
    assert function["strict"] is True
    assert function["parameters"]["additionalProperties"] is False


def test_end_to_end_run_reads_and_patches_a_file_through_the_sdk(tmp_path):
    import json

    import neta_base.plugin

    (tmp_path / "config.py").write_text("PORT = 8080\nDEBUG = True\n")
    patch_args = {"path": "config.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}
    replies = [
        Reply(tool_calls=[("read_file", json.dumps({"path": "config.py"}))]),
        Reply(text="Turning debug off.", tool_calls=[("patch", json.dumps(patch_args))]),
        Reply(text="Debug is off."),
    ]
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("base", neta_base.plugin)])
    with FakeOpenAI(replies) as server:
        agent = Agent(
            provider="openai",
            model="fake-model",
            plugin_manager=pm,
            workspace=tmp_path,
            provider_options={"base_url": server.base_url, "api_key": "sk-test", "max_retries": 0},
        )
        result = asyncio.run(agent.run("turn debug off in config.py"))
    assert result.outcome == "completed"
    assert (tmp_path / "config.py").read_text() == "PORT = 8080\nDEBUG = False\n"
    read_result = server.requests[1]["messages"][-1]
    assert read_result["role"] == "tool"
    assert "DEBUG = True" in read_result["content"]
    patch_result = server.requests[2]["messages"][-1]["content"]
    assert "-DEBUG = True" in patch_result
    assert "+DEBUG = False" in patch_result
    assert "strategy: exact" in patch_result
    offered = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert offered == {"bash", "read_file", "write_file", "list_dir", "patch"}
    assert server.requests[0]["messages"][0]["role"] == "system"
