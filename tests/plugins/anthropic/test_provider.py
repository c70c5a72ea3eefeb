"""The anthropic provider through the real SDK against a fake Messages API on a loopback port."""

import asyncio
import sys

import pytest

import neta
import neta.providers.client_pool
from neta_anthropic import plugin
from tests.fake_anthropic import FakeAnthropic, Reply

# The SDK takes seconds to import: the tests import it when they run, so that of the xdist
# workers only those running these modules pay for it (every worker collects every module).


def anthropic_provider(*args, **options):
    from neta_anthropic.provider import AnthropicProvider

    return AnthropicProvider(*args, **options)


def default_max_tokens():
    from neta_anthropic.provider import DEFAULT_MAX_TOKENS

    return DEFAULT_MAX_TOKENS


KEY = "sk-ant-test"
ECHO = {
    "type": "function",
    "function": {
        "name": "echo",
        "description": "Echo text.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
}


def request(text="hi", tools=(), system="You are terse."):
    messages = [
        neta.Message(role="system", content=system),
        neta.Message(role="user", content=text),
    ]
    return neta.ModelRequest(messages=messages, tools=list(tools), model="claude-test")


def provider(server, **options):
    return anthropic_provider("claude-test", base_url=server.base_url, api_key=KEY, **options)


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_text_and_tool_uses_come_back_whole(stream):
    reply = Reply(text="Let me check.", tool_calls=[("echo", '{"text": "hello world"}')])
    with FakeAnthropic([reply]) as server:
        pieces = []
        response = asyncio.run(provider(server, stream=stream).complete(request(), pieces.append))
    assert response.text == "Let me check."
    assert "".join(pieces) == "Let me check."
    [call] = response.tool_calls
    assert (call.id, call.name, call.arguments) == ("toolu_0", "echo", '{"text": "hello world"}')
    assert response.finish_reason == "tool_calls"
    body = server.requests[0]
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == default_max_tokens()
    assert bool(body.get("stream")) is stream
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


def test_streamed_text_arrives_in_pieces_and_tool_input_from_json_deltas():
    reply = Reply(text="one two three", tool_calls=[("echo", '{"text": "a long argument"}')])
    with FakeAnthropic([reply]) as server:
        pieces = []
        response = asyncio.run(provider(server).complete(request(), pieces.append))
    assert pieces == ["one ", "two ", "three"]
    assert response.tool_calls[0].arguments == '{"text": "a long argument"}'


def test_system_prompt_and_tool_list_carry_cache_breakpoints():
    with FakeAnthropic([Reply(text="ok")]) as server:
        asyncio.run(provider(server).complete(request(tools=[ECHO]), lambda _: None))
    body = server.requests[0]
    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
    ]
    [tool] = body["tools"]
    assert tool["name"] == "echo"
    assert tool["input_schema"] == ECHO["function"]["parameters"]
    assert tool["cache_control"] == {"type": "ephemeral"}


def test_caching_can_be_turned_off():
    with FakeAnthropic([Reply(text="ok")]) as server:
        asyncio.run(provider(server, cache=False).complete(request(tools=[ECHO]), lambda _: None))
    body = server.requests[0]
    assert "cache_control" not in body["system"][0]
    assert "cache_control" not in body["tools"][0]


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_cache_tokens_are_reported_in_usage(stream):
    reply = Reply(text="ok", usage=(12, 7, 3000, 400))
    with FakeAnthropic([reply]) as server:
        response = asyncio.run(provider(server, stream=stream).complete(request(), lambda _: None))
    usage = response.usage
    assert (usage.cache_read_tokens, usage.cache_creation_tokens) == (3000, 400)
    assert usage.input_tokens == 12 + 3000 + 400
    assert usage.output_tokens == 7


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [("max_tokens", "length"), ("end_turn", "stop"), ("refusal", "content_filter")],
)
def test_stop_reasons_map_onto_the_runtimes(stop_reason, finish):
    with FakeAnthropic([Reply(text="cut", stop_reason=stop_reason)]) as server:
        response = asyncio.run(provider(server).complete(request(), lambda _: None))
    assert response.finish_reason == finish


def test_max_tokens_can_be_set():
    with FakeAnthropic([Reply(text="ok")]) as server:
        asyncio.run(provider(server, max_tokens=123).complete(request(), lambda _: None))
    assert server.requests[0]["max_tokens"] == 123


def test_bad_key_fails_at_once_naming_provider_model_and_url():
    with FakeAnthropic([Reply(text="never")]) as server:
        bad = anthropic_provider("claude-test", base_url=server.base_url, api_key="wrong")
        with pytest.raises(neta.ProviderError) as caught:
            asyncio.run(bad.complete(request(), lambda _: None))
    error = caught.value
    assert error.retryable is False
    assert error.status == 401
    assert str(error) == (
        f"anthropic model 'claude-test' at {server.base_url}: model API answered 401: "
        "invalid API key"
    )
    assert len(server.requests) == 1  # the SDK's own retries are off


def test_unknown_model_is_not_retryable():
    unknown = Reply(status=404, error_type="not_found_error", text="model: claude-nope")
    with FakeAnthropic([unknown]) as server, pytest.raises(neta.ProviderError) as caught:
        asyncio.run(provider(server).complete(request(), lambda _: None))
    assert caught.value.retryable is False
    assert str(caught.value).endswith("model API answered 404: model: claude-nope")


def test_rate_limit_is_retryable_and_carries_retry_after():
    limited = Reply(status=429, error_type="rate_limit_error", headers={"retry-after": "7"})
    with FakeAnthropic([limited]) as server, pytest.raises(neta.ProviderError) as caught:
        asyncio.run(provider(server).complete(request(), lambda _: None))
    assert (caught.value.retryable, caught.value.retry_after, caught.value.status) == (True, 7, 429)


def test_error_event_mid_stream_is_a_retryable_overload():
    overloaded = Reply(text="half", error_event="overloaded_error")
    expected = pytest.raises(neta.ProviderError, match="529: overloaded mid-stream")
    with FakeAnthropic([overloaded]) as server, expected as caught:
        asyncio.run(provider(server).complete(request(), lambda _: None))
    assert caught.value.retryable is True


def test_stream_cut_off_before_its_end_is_retryable():
    cut = Reply(text="one two three four", cut_after=5)
    expected = pytest.raises(neta.ProviderError, match="cut off on the way")
    with FakeAnthropic([cut]) as server, expected as caught:
        asyncio.run(provider(server).complete(request(), lambda _: None))
    assert caught.value.retryable is True
    assert caught.value.provider == "anthropic"


def test_unreachable_api_is_retryable():
    with FakeAnthropic() as server:
        url = server.base_url
    gone = anthropic_provider("claude-test", base_url=url, api_key=KEY)
    with pytest.raises(neta.ProviderError, match="cannot reach") as caught:
        asyncio.run(gone.complete(request(), lambda _: None))
    assert caught.value.retryable is True


def test_key_and_url_come_from_the_environment(monkeypatch):
    with FakeAnthropic([Reply(text="env works")]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_MODEL", "claude-from-env")
        from_env = anthropic_provider()
        response = asyncio.run(
            from_env.complete(neta.ModelRequest(messages=request().messages), lambda _: None)
        )
    assert response.text == "env works"
    assert server.requests[0]["model"] == "claude-from-env"


def test_no_key_and_no_url_is_a_clear_config_error(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(neta.ConfigError, match="needs an API key: set ANTHROPIC_API_KEY"):
        anthropic_provider("m")


def test_a_host_shares_one_client_per_configuration_and_closes_it():
    with FakeAnthropic([Reply(text="a"), Reply(text="b"), Reply(text="c"), Reply(text="d")]) as s:
        first, second = provider(s), provider(s)
        other = anthropic_provider("claude-test", base_url=s.base_url, api_key=KEY, timeout=5)

        async def host():
            pool = neta.providers.client_pool.ClientPool()
            with pool.active():
                await first.complete(request(), lambda _: None)
                await second.complete(request(), lambda _: None)
                await other.complete(request(), lambda _: None)
            shared = len(pool)
            clients = [client for client, _ in pool._clients.values()]
            await pool.aclose()
            return shared, [client.is_closed() for client in clients]

        shared, closed = asyncio.run(host())
        # without a host's pool, a call makes its own client and closes it again
        alone = asyncio.run(first.complete(request(), lambda _: None))
    assert shared == 2  # same configuration, one client
    assert closed == [True, True]
    assert alone.text == "d"


def test_calls_without_a_host_after_the_first_load_no_certificates(certificate_loads):
    # each call without a host's pool makes a client; the CA certificates are loaded once
    with FakeAnthropic([Reply(text=t) for t in "abcd"]) as server:
        first = asyncio.run(provider(server).complete(request(), lambda _: None))
        certificate_loads.clear()  # whatever the first client and its imports loaded
        texts = [
            asyncio.run(provider(server).complete(request(), lambda _: None)).text for _ in range(3)
        ]
    assert [first.text, *texts] == ["a", "b", "c", "d"]
    assert certificate_loads == []


def test_choosing_the_provider_without_the_sdk_says_what_to_install(monkeypatch, make_pm):
    monkeypatch.setitem(sys.modules, "anthropic", None)  # import anthropic now fails
    pm = make_pm(anthropic=plugin)
    with pytest.raises(neta.ConfigError) as caught:
        neta.Agent(provider="anthropic", model="m", plugin_manager=pm)
    assert str(caught.value) == (
        "the anthropic provider needs the anthropic SDK, which is not installed: "
        "pip install 'neta[anthropic]'"
    )


def test_choosing_the_provider_without_a_key_says_so_before_the_sdk_loads(monkeypatch, make_pm):
    # the SDK takes seconds to import: a command missing both a key and a URL says so at once
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setitem(sys.modules, "neta_anthropic.provider", None)  # cannot be imported
    pm = make_pm(anthropic=plugin)
    with pytest.raises(neta.ConfigError, match="needs an API key: set ANTHROPIC_API_KEY"):
        neta.Agent(provider="anthropic", model="m", plugin_manager=pm)
    # given a key, the provider is made; here it cannot load, and says so
    with pytest.raises(neta.ConfigError, match="could not load the anthropic SDK"):
        neta.Agent(
            provider="anthropic", model="m", provider_options={"api_key": "k"}, plugin_manager=pm
        )
