"""``AnthropicProvider``: the Messages API through the official ``anthropic`` SDK.

Replies stream by default: text deltas go to the run as they come, ``tool_use`` blocks are put
together from their ``input_json_delta`` parts, several in one reply become parallel calls.
The SDK's own retries are off; failures say whether they may pass (``retryable``) and how
long the API asked to wait, and the runtime's one retry policy does the rest.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anthropic
import httpx2

from neta import (
    ConfigError,
    ModelRequest,
    ModelResponse,
    ProviderError,
    TextSink,
    active_pool,
    parse_retry_after,
    tls_client_context,
)
from neta_anthropic.endpoint import endpoint
from neta_anthropic.history import system_blocks, to_anthropic, tool_definitions
from neta_anthropic.reply import ReplyAssembler, whole_reply

DEFAULT_MODEL = "claude-sonnet-4-5"
"""The model asked for when neither the options nor ``ANTHROPIC_MODEL`` name one."""

DEFAULT_MAX_TOKENS = 8192
"""Output tokens a reply may take unless ``max_tokens`` says otherwise."""

DEFAULT_URL = "https://api.anthropic.com"
"""The API root when neither ``base_url`` nor ``ANTHROPIC_BASE_URL`` gives one."""

_T = TypeVar("_T")

_KEYLESS = "not-needed"  # a local proxy may take any key; the SDK insists on one

# Error types the API sends in a stream's error event, as the HTTP status they stand for; a
# type not listed is not retried.
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


class AnthropicProvider:
    """Messages API turns, streamed or whole, with prompt caching; images go as ``image`` blocks.

    Args:
        model: the model name; ``ANTHROPIC_MODEL`` or ``DEFAULT_MODEL`` when empty.
        base_url: the API root (without ``/v1``); ``ANTHROPIC_BASE_URL`` when ``None``.
        api_key: the key; ``ANTHROPIC_API_KEY`` when ``None``. Optional with a base URL.
        max_tokens: the most output tokens a reply may take.
        stream: stream the reply (text as it comes) or ask for it whole.
        cache: put cache breakpoints on the system prompt and the tool list.
        timeout: seconds per request.
    """

    name = "anthropic"
    """The provider's name, as traces report it (``gen_ai.provider.name``)."""

    def __init__(
        self,
        model: str = "",
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        stream: bool = True,
        cache: bool = True,
        timeout: float = 600.0,
    ) -> None:
        base_url, api_key = endpoint(base_url, api_key)
        if max_tokens < 1:
            raise ConfigError(f"max_tokens must be at least 1, not {max_tokens}")
        self.model = model or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL
        self.url = base_url or DEFAULT_URL
        self.max_tokens = max_tokens
        self.stream = stream
        self.cache = cache
        self.image_input = True
        """Claude models take images (the runtime sends them; ``neta.ImagePart``)."""
        self._client_options: dict[str, Any] = {
            "api_key": api_key or _KEYLESS,
            "base_url": self.url,
            "max_retries": 0,  # the runtime's retry policy retries, and says so
            "timeout": timeout,
        }

    async def list_models(self) -> list[str]:
        """The ids of the models the API lists (``GET /v1/models``), in its order.

        Raises:
            ProviderError: the server could not be asked, or refused.
        """
        try:
            async with self._client() as client:
                return [model.id async for model in client.models.list()]
        except anthropic.APIError as exc:
            raise ProviderError(
                f"cannot list the models: {exc}", provider="anthropic", url=self.url
            ) from exc

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """Send one Messages API request and collect the turn.

        Raises:
            ProviderError: the API refused or failed; ``retryable`` for rate limits, 5xx,
                overload, dropped connections and replies cut off on the way.
        """
        model = request.model or self.model
        params: dict[str, Any] = {
            "model": model,
            "max_tokens": self.max_tokens,
            "messages": to_anthropic(request.messages),
        }
        system = system_blocks(request.messages, cache=self.cache)
        if system:
            params["system"] = system
        if request.tools:
            params["tools"] = tool_definitions(request.tools, cache=self.cache)
        if request.output is not None:  # the answer comes as a call of the output tool
            params["tool_choice"] = {"type": "any"}
        try:
            async with self._client() as client:
                if not self.stream:
                    raw = await self._sent(client.messages.with_raw_response.create(**params))
                    return whole_reply(await raw.parse(), on_text)
                assembler = ReplyAssembler(on_text)
                stream = await self._sent(client.messages.create(**params, stream=True))
                async with stream:  # closed at once when the run is cancelled mid-stream
                    async for event in stream:
                        assembler.add(event)
                return assembler.finish()
        except anthropic.APIStatusError as exc:
            raise self._status_error(exc, model) from exc
        except (anthropic.APIConnectionError, httpx2.TransportError) as exc:
            raise self._error(
                f"cannot reach the model API or the connection broke: {exc}", model, retryable=True
            ) from exc
        except anthropic.AnthropicError as exc:
            raise self._error(f"model API failed: {_short(str(exc))}", model) from exc
        except ProviderError as exc:  # the request JSON cannot hold, a reply cut off on the way
            raise self._error(
                exc.detail,
                model,
                retryable=exc.retryable,
                retry_after=exc.retry_after,
                status=exc.status,
            ) from exc
        except ValueError as exc:  # an event whose data is not JSON
            raise self._error(
                f"model API sent a malformed reply: {_short(str(exc))}", model
            ) from exc

    @staticmethod
    async def _sent(request: Awaitable[_T]) -> _T:
        """What ``request`` answers; a request JSON cannot hold is a ``ProviderError``.

        The SDK encodes the request before anything is sent, so a ``ValueError`` here is the
        request's (``NaN``, half a surrogate pair), not the reply's.
        """
        try:
            return await request
        except (ValueError, TypeError) as exc:
            raise ProviderError(f"the request cannot be sent as JSON: {_short(str(exc))}") from exc

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[anthropic.AsyncAnthropic]:
        """The host's pooled client for this configuration, or one made for this call alone."""
        pool = active_pool()
        if pool is None:
            async with self._new_client() as client:
                yield client
            return
        key = ("anthropic", *sorted(self._client_options.items()))
        yield pool.get(key, self._new_client, _close)

    def _new_client(self) -> anthropic.AsyncAnthropic:
        # the process's TLS context (``tls_client_context``), not a new one for each client
        http = anthropic.DefaultAsyncHttpxClient(verify=tls_client_context())
        return anthropic.AsyncAnthropic(**self._client_options, http_client=http)

    def _status_error(self, exc: anthropic.APIStatusError, model: str) -> ProviderError:
        body = exc.body if isinstance(exc.body, dict) else {}
        found = body.get("error")
        error: dict[str, Any] = found if isinstance(found, dict) else {}
        detail = _short(str(error.get("message") or exc.message))
        kind = str(error.get("type"))
        status: int | None = exc.status_code
        if exc.status_code < 400:  # an error event in the middle of a stream that had begun well
            status = _ERROR_STATUS.get(kind)
        return self._error(
            f"model API answered {status}: {detail}"
            if status is not None
            else f"model API sent an error in its reply ({kind}): {detail}",
            model,
            retryable=status is not None and (status in (408, 409, 429) or status >= 500),
            retry_after=parse_retry_after(exc.response.headers),
            status=status,
        )

    def _error(
        self,
        message: str,
        model: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> ProviderError:
        return ProviderError(
            message,
            retryable=retryable,
            retry_after=retry_after,
            status=status,
            provider="anthropic",
            model=model,
            url=self.url,
        )


def _short(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[:limit] + "…"


async def _close(client: anthropic.AsyncAnthropic) -> None:
    await client.close()
