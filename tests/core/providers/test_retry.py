"""One retry policy for every provider: backoff, Retry-After, bounded tries, retry events."""

import asyncio
import email.utils
import io

import pytest
from rich.console import Console

import neta
from neta.cli.render import EventRenderer
from neta.events import ProviderRetry
from neta.providers.retry import (
    RetryingProvider,
    RetryPolicy,
    parse_retry_after,
    retry_reason,
)
from neta.runtime.agent import Agent
from tests.core.runtime import kit
from tests.fake_openai import FakeOpenAI, Reply

FAST = RetryPolicy(base_delay=0.01, max_delay=0.02)


def failure(status=None, retryable=True, retry_after=None):
    message = f"failed {status}"
    return {
        "message": message,
        "retryable": retryable,
        "status": status,
        "retry_after": retry_after,
    }


def scripted_agent(tmp_path, turns, **options):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    provider = neta.ScriptedProvider(turns)
    return Agent(provider=provider, plugin_manager=pm, workspace=tmp_path, **options), provider


def test_backoff_doubles_up_to_the_cap_and_jitter_only_shortens():
    exact = RetryPolicy(base_delay=1, max_delay=5, jitter=0.0)
    assert [exact.backoff(n) for n in range(1, 6)] == [1, 2, 4, 5, 5]
    jittered = RetryPolicy(base_delay=1, max_delay=5, jitter=0.5)
    delays = [jittered.backoff(3) for _ in range(200)]
    assert all(2.0 <= d <= 4.0 for d in delays)
    assert len(set(delays)) > 100  # spread out, not one value


def test_retry_after_is_honoured_exactly_and_bounds_apply():
    policy = RetryPolicy(max_tries=3, max_retry_after=60)
    limited = neta.ProviderError("slow", retryable=True, retry_after=7, status=429)
    assert policy.wait_before_retry(limited, 1) == 7
    assert policy.wait_before_retry(limited, 3) is None  # the third try was the last
    too_long = neta.ProviderError("slow", retryable=True, retry_after=600, status=429)
    assert policy.wait_before_retry(too_long, 1) is None
    bad_key = neta.ProviderError("401", status=401)
    assert policy.wait_before_retry(bad_key, 1) is None


def test_policy_refuses_impossible_settings():
    with pytest.raises(neta.ConfigError, match="max_tries must be at least 1"):
        RetryPolicy(max_tries=0)
    with pytest.raises(neta.ConfigError, match="jitter"):
        RetryPolicy(jitter=2)


def test_retry_after_headers_are_read_in_every_form():
    assert parse_retry_after({"Retry-After": "4"}) == 4
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    date = email.utils.formatdate(1_000_030, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=1_000_000) == 30
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "-3"}) is None
    assert parse_retry_after({}) is None


def test_reasons_name_the_kind_of_failure():
    assert retry_reason(neta.ProviderError("x", status=429)) == "rate limited"
    assert retry_reason(neta.ProviderError("x", status=529)) == "overloaded"
    assert retry_reason(neta.ProviderError("x", status=503)) == "server error 503"
    assert retry_reason(neta.ProviderError("x")) == "request failed"


def test_retryable_failures_are_retried_with_an_event_each(tmp_path):
    turns = [{"error": failure(503)}, {"error": failure(429, retry_after=0.05)}, {"text": "ok"}]
    agent, provider = scripted_agent(tmp_path, turns, retry=FAST)
    result = asyncio.run(agent.run("go"))
    assert result.outcome == "completed"
    assert result.text == "ok"
    retries = [e for e in result.events if isinstance(e, ProviderRetry)]
    assert [(r.attempt, r.reason) for r in retries] == [
        (1, "server error 503"),
        (2, "rate limited"),
    ]
    assert 0.005 <= retries[0].delay <= 0.01
    assert retries[1].delay == 0.05
    assert len(provider.received) == 3


def test_tries_are_bounded_and_the_error_says_how_many(tmp_path):
    turns = [{"error": failure(503)}] * 3 + [{"text": "too late"}]
    agent, provider = scripted_agent(tmp_path, turns, retry=RetryPolicy(max_tries=3, base_delay=0))
    result = asyncio.run(agent.run("go"))
    assert result.outcome == "error"
    assert result.reason == "failed 503 (gave up after 3 tries)"
    assert len(provider.received) == 3


def test_a_non_retryable_failure_ends_the_run_at_once(tmp_path):
    turns = [{"error": failure(401, retryable=False)}, {"text": "never"}]
    agent, provider = scripted_agent(tmp_path, turns)
    result = asyncio.run(agent.run("go"))
    assert (result.outcome, result.reason) == ("error", "failed 401")
    assert len(provider.received) == 1
    assert not [e for e in result.events if isinstance(e, ProviderRetry)]


def test_a_retry_after_longer_than_the_policy_allows_fails_at_once_and_says_so(tmp_path):
    turns = [{"error": failure(429, retry_after=3600)}, {"text": "never"}]
    agent, provider = scripted_agent(tmp_path, turns)
    result = asyncio.run(agent.run("go"))
    assert result.reason == (
        "failed 429 (the API asks to wait 3600 s, more than the 120 s the retry policy waits)"
    )
    assert len(provider.received) == 1


def test_retrying_provider_works_on_its_own():
    provider = neta.ScriptedProvider([{"error": failure(500)}, {"text": "fine"}])
    notices = []
    wrapped = RetryingProvider(provider, FAST, notices.append)
    request = neta.ModelRequest(messages=[neta.Message(role="user", content="x")])
    response = asyncio.run(wrapped.complete(request, lambda _: None))
    assert response.text == "fine"
    assert [n.attempt for n in notices] == [1]


def test_openai_provider_is_retried_by_the_policy_not_the_sdk(tmp_path):
    replies = [Reply(status=503, text="busy"), Reply(status=502, text="bad gw"), Reply(text="up")]
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    with FakeOpenAI(replies) as server:
        agent = Agent(
            model="openai:gpt-test",
            plugin_manager=pm,
            workspace=tmp_path,
            retry=FAST,
            provider_options={"base_url": server.base_url, "api_key": "sk-test"},
        )
        result = asyncio.run(agent.run("go"))
    assert result.text == "up"
    assert len(server.requests) == 3
    assert [e.reason for e in result.events if isinstance(e, ProviderRetry)] == [
        "server error 503",
        "server error 502",
    ]
    assert server.requests[0]["model"] == "gpt-test"


def test_openai_bad_key_fails_at_once_naming_provider_model_and_url(tmp_path):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    with FakeOpenAI([Reply(status=401, text="Incorrect API key"), Reply(text="no")]) as server:
        agent = Agent(
            provider="openai",
            model="gpt-test",
            plugin_manager=pm,
            workspace=tmp_path,
            provider_options={"base_url": server.base_url, "api_key": "sk-bad"},
        )
        result = asyncio.run(agent.run("go"))
    assert result.outcome == "error"
    assert result.reason == (
        f"openai model 'gpt-test' at {server.base_url}: model API answered 401: Incorrect API key"
    )
    assert len(server.requests) == 1


def test_the_terminal_shows_each_retry_in_one_line():
    out = io.StringIO()
    render = EventRenderer(Console(file=out, width=100))
    render(ProviderRetry(attempt=1, max_tries=4, delay=4.2, reason="rate limited"))
    render(ProviderRetry(attempt=2, max_tries=4, delay=0.25, reason="server error 503"))
    assert out.getvalue().splitlines() == [
        "rate limited, retrying in 4 s (try 2 of 4)",
        "server error 503, retrying in 0.2 s (try 3 of 4)",
    ]
