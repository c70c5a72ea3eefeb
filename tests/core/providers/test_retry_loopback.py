"""A connection refused on this machine is not tried again; other failures still are."""

import asyncio
import errno

import pytest

import neta
from neta.messages import Message
from neta.providers.base import ModelRequest
from neta.providers.openai_compat import OpenAIProvider
from neta.providers.retry import RetryingProvider, RetryPolicy, refused_on_loopback
from tests.fake_openai import FakeOpenAI, Reply
from tests.services import free_port

FAST = RetryPolicy(base_delay=0.0, max_delay=0.0)
REQUEST = ModelRequest(messages=[Message(role="user", content="hi")], tools=[])


class Failing:
    """A provider whose every try fails with a retryable error from ``cause``."""

    def __init__(self, url, cause):
        self.url = url
        self.cause = cause
        self.tries = 0

    async def complete(self, request, on_text):
        self.tries += 1
        try:
            raise self.cause
        except OSError as exc:
            raise neta.ProviderError("cannot reach it", retryable=True, url=self.url) from exc


def tries(url, cause):
    provider = Failing(url, cause)
    with pytest.raises(neta.ProviderError):
        asyncio.run(RetryingProvider(provider, FAST).complete(REQUEST, lambda _: None))
    return provider.tries


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8080/v1", "http://localhost:11434/v1", "http://[::1]:8000/v1"]
)
def test_a_refused_connection_to_this_machine_is_tried_once(url):
    assert tries(url, ConnectionRefusedError(errno.ECONNREFUSED, "refused")) == 1


def test_a_refused_connection_elsewhere_is_tried_again():
    refused = ConnectionRefusedError(errno.ECONNREFUSED, "refused")
    assert tries("http://10.1.2.3/v1", refused) == FAST.max_tries


def test_other_connection_failures_on_this_machine_are_tried_again():
    reset = ConnectionResetError(errno.ECONNRESET, "reset")
    assert tries("http://127.0.0.1:8080/v1", reset) == FAST.max_tries


def test_a_server_error_on_this_machine_is_tried_again():
    replies = [Reply(status=503, text="starting"), Reply(text="up now")]
    with FakeOpenAI(replies) as server:
        provider = OpenAIProvider("fake-model", base_url=server.base_url, api_key="k")
        reply = asyncio.run(RetryingProvider(provider, FAST).complete(REQUEST, lambda _: None))
        assert len(server.requests) == 2
    assert reply.text == "up now"


def test_the_openai_provider_s_refused_connection_on_loopback_is_recognised():
    url = f"http://127.0.0.1:{free_port()}/v1"
    provider = OpenAIProvider("m", base_url=url, api_key="k")
    with pytest.raises(neta.ProviderError) as failed:
        asyncio.run(provider.complete(REQUEST, lambda _: None))
    assert refused_on_loopback(failed.value)
