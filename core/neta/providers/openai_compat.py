"""Any OpenAI-compatible Chat Completions endpoint, through the official ``openai`` SDK.

Works with OpenAI and with local servers that speak the same API (Ollama, vLLM, llama.cpp
server). Base URL and key come from options or ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``. The
SDK's own retries are off by default: the runtime retries every provider under one policy
(``neta.providers.retry``), so failures say whether they may pass (``retryable``) and how long
the API asked to wait (``retry_after``).

A stream is read as server-sent events (``neta.providers.sse``: comments, ``id`` and ``retry``
fields, any line ends) and each event's JSON put together by ``neta.providers.openai_reply``.
Servers that call themselves compatible bend the protocol in small ways; what is tolerated:
streamed tool-call fragments without an ``index`` (told apart by their ids), several calls sent
at the same index with different ids, a call's name repeated in every fragment, calls without
ids, chunks without choices or without a delta. Whatever fails mid-stream (an error event, a
malformed chunk, a broken connection) is a ``ProviderError``; an error the server reports in
the stream is retried when the status it stands for would be (a 502, an overload, a rate
limit). A stream that ends without a finish reason was cut off on the way (a dropped
connection, a proxy's limit): it is never taken as the answer, but asked for again under the
same retry policy, and when every try is cut the error says so.

The request body goes out through the client's ``post`` as JSON the provider encodes itself:
the typed ``chat.completions.create`` walks every message and schema against its parameter
types on each call, work that grows with the conversation and showed as the largest cost of a
busy host. The JSON of the messages and tool schemas a turn repeats from the turn before is
reused, not encoded again (``neta.providers.json_body``).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import socket
import ssl
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing, asynccontextmanager
from typing import Any, cast

import httpx2
import openai

from neta.errors import ProviderError, os_reason
from neta.providers.base import ModelRequest, ModelResponse, TextSink
from neta.providers.client_pool import active_pool
from neta.providers.endpoint import openai_endpoint
from neta.providers.json_body import BodyEncoder
from neta.providers.openai_reply import CutOff, StreamedReply, whole_reply
from neta.providers.retry import parse_retry_after, retryable_status
from neta.providers.sse import ServerSentEvent, read_events
from neta.providers.tls import client_context

_COMPLETIONS = "/chat/completions"
_KEYLESS = "not-needed"  # local servers take any key; the SDK insists on one
_STREAMED = {"stream": True, "stream_options": {"include_usage": True}}

DEFAULT_READ_TIMEOUT = 300.0
"""Seconds the model server may stay silent (each read) before the request fails."""

_DRAIN_SECONDS = 0.1  # how long what follows ``[DONE]`` is read, so the connection is reused


DEFAULT_MODEL = "gpt-4o-mini"
"""The model asked when neither ``model`` nor ``OPENAI_MODEL`` names one."""


class OpenAIProvider:
    """Chat Completions with streaming text and tool calls.

    Args:
        model: the model name; ``OPENAI_MODEL`` or ``gpt-4o-mini`` when empty.
        base_url: the API root (``.../v1``); ``OPENAI_BASE_URL`` when ``None``.
        api_key: the key; ``OPENAI_API_KEY`` when ``None``. Optional with a base URL.
        stream: stream the reply (text deltas as they come) or ask for it whole.
        max_retries: the SDK's own retries of failed HTTP requests (off by default: the
            runtime's retry policy retries every provider, cut-off replies included, and emits
            a retry event for each).
        timeout: seconds the server may stay silent, per read (``--model-timeout``).
        image_input: whether the model takes images (``image_url`` parts); a server whose
            model takes text only is told ``False`` (``provider_options``), and its model
            reads each image's placeholder instead.
    """

    name = "openai"
    """The provider's name, as traces report it (``gen_ai.provider.name``)."""

    def __init__(
        self,
        model: str = "",
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        stream: bool = True,
        max_retries: int = 0,
        timeout: float = DEFAULT_READ_TIMEOUT,
        image_input: bool = True,
    ) -> None:
        base_url, api_key = openai_endpoint(base_url, api_key)
        self.image_input = image_input
        self.model = model or os.environ.get("OPENAI_MODEL") or DEFAULT_MODEL
        self.chosen = bool(model or os.environ.get("OPENAI_MODEL"))  # else the default
        self.stream = stream
        self.url = base_url or "https://api.openai.com/v1"
        self.read_timeout = timeout
        self._client_options: dict[str, Any] = {
            "api_key": api_key or _KEYLESS,
            "base_url": base_url,
            "max_retries": max_retries,
            "timeout": timeout,
        }
        self._encoder = BodyEncoder()

    async def list_models(self) -> list[str]:
        """The ids of the models the API lists (``GET /models``), in its order.

        Raises:
            ProviderError: the server could not be asked, or refused.
        """
        try:
            async with self._client() as client:
                return [model.id async for model in client.models.list()]
        except openai.APIError as exc:
            raise ProviderError(
                f"cannot list the models: {_short(str(exc))}", provider="openai", url=self.url
            ) from exc

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """Send one Chat Completions request (streamed or not) and collect the turn.

        A reply cut off mid-stream is a retryable ``ProviderError``: the runtime's retry
        policy asks for it again, as for every other retryable failure.

        Raises:
            ProviderError: the request failed, or the reply was cut off.
        """
        model = request.model or self.model
        extra = _STREAMED if self.stream else None
        tools = request.tools
        if request.output is not None:  # the API's own structured output, not the output tool
            extra = {**(extra or {}), "response_format": request.output.response_format()}
            tools = [t for t in tools if t["function"]["name"] != request.output.name]
        try:
            body = self._encoder.body(model, request.messages, tools, extra)
        except (ValueError, TypeError) as exc:  # NaN, a lone surrogate, an object JSON lacks
            raise ProviderError(
                f"the request cannot be sent as JSON: {_short(str(exc))}",
                provider="openai",
                model=model,
                url=self.url,
            ) from exc
        try:
            async with self._client() as client:
                if self.stream:
                    response = await self._streamed(client, body, on_text)
                else:
                    response = await self._whole(client, body, on_text)
        except openai.APIStatusError as exc:
            retryable = retryable_status(exc.status_code)
            error = exc.body if isinstance(exc.body, dict) else {}
            detail = str(error.get("message") or exc.message)
            if exc.status_code == 404 and model == self.model and not self.chosen:
                detail += (
                    f" ({model} is the default model: choose one with -m or OPENAI_MODEL; "
                    "`neta models` lists what this server offers)"
                )
            raise ProviderError(
                f"model API answered {exc.status_code}: {_short(detail)}",
                retryable=retryable,
                retry_after=parse_retry_after(exc.response.headers),
                status=exc.status_code,
                provider="openai",
                model=model,
                url=self.url,
            ) from exc
        except (openai.APITimeoutError, httpx2.TimeoutException) as exc:
            if _refused(exc):  # the aiohttp transport reports a failed connect as a timeout
                raise _unreachable(exc, model, self.url) from exc
            raise ProviderError(
                f"the model server sent nothing for {self.read_timeout:g} s "
                "(the per-read timeout, --model-timeout)",
                retryable=True,
            ) from exc
        except openai.APIConnectionError as exc:
            if _mid_reply(exc):  # connected, then the reply broke off (a whole reply too)
                raise _broken(exc) from exc
            raise _unreachable(exc, model, self.url) from exc
        except openai.OpenAIError as exc:  # whatever else the SDK reports
            raise ProviderError(f"model API failed: {_short(str(exc))}") from exc
        except CutOff:
            raise
        except ProviderError as exc:  # what the reply itself says went wrong: named as others are
            raise ProviderError(
                exc.detail,
                retryable=exc.retryable,
                status=exc.status,
                provider="openai",
                model=model,
                url=self.url,
            ) from exc
        except ValueError as exc:  # a whole reply whose body is not JSON
            raise ProviderError(f"model API sent a malformed reply: {_short(str(exc))}") from exc
        except httpx2.TransportError as exc:  # the connection broke mid-reply
            raise _broken(exc) from exc
        if not response.tool_calls:  # the run's answer: its next run starts from the history
            self._encoder.forget()
        return response

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[openai.AsyncOpenAI]:
        """The host's pooled client for this configuration, or one made for this call alone."""
        pool = active_pool()
        if pool is None:
            async with self._new_client() as client:
                yield client
            return
        key = ("openai", *sorted(self._client_options.items()))
        yield pool.get(key, self._new_client, _close)

    def _new_client(self) -> openai.AsyncOpenAI:
        # The SDK's aiohttp transport: httpx's pool probes every idle connection's socket on
        # each request, a cost that grows with the sessions a host serves at once. The TLS
        # context is the process's one (``neta.providers.tls``), not a new one per client.
        http = openai.DefaultAioHttpClient(verify=client_context())
        return openai.AsyncOpenAI(**self._client_options, http_client=http)

    async def _whole(
        self, client: openai.AsyncOpenAI, body: bytes, on_text: TextSink
    ) -> ModelResponse:
        # the body as the JSON it is, read by the same rules as a stream's chunks
        data = await client.post(_COMPLETIONS, content=body, cast_to=object)
        return whole_reply(data, on_text)

    async def _streamed(
        self, client: openai.AsyncOpenAI, body: bytes, on_text: TextSink
    ) -> ModelResponse:
        # The SDK makes the request and answers its errors; the events are read here, by the
        # format's rules (the SDK's reader takes an event without data for a malformed chunk).
        stream = cast(
            openai.AsyncStream[object],
            await client.post(
                _COMPLETIONS,
                content=body,
                cast_to=object,
                stream=True,
                stream_cls=openai.AsyncStream[object],
            ),
        )
        reply = StreamedReply(on_text)
        try:
            # closed at once when the run is cancelled mid-stream
            async with stream, aclosing(read_events(stream.response.aiter_bytes())) as events:
                async for event in events:
                    reply.add(event)
                    if reply.done:
                        await _drain(events)
                        break
        except (openai.APITimeoutError, httpx2.TimeoutException):
            raise  # the server fell silent: ``complete`` says for how long
        except (openai.APIConnectionError, httpx2.TransportError, OSError) as exc:
            raise _broken(exc) from exc
        return reply.finish()


async def _drain(events: AsyncIterator[ServerSentEvent]) -> None:
    """Read what follows ``[DONE]`` (normally nothing), briefly, so the connection can be reused."""
    with contextlib.suppress(TimeoutError, httpx2.HTTPError, OSError):
        async with asyncio.timeout(_DRAIN_SECONDS):
            async for _ in events:
                pass


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and what it was raised from or during, innermost last."""
    seen: BaseException | None = exc
    while seen is not None:
        yield seen
        seen = seen.__cause__ or seen.__context__


def _refused(exc: BaseException) -> bool:
    """Whether a connection could not be made at all (refused, unreachable), not timed out."""
    return any(isinstance(e, OSError) and not isinstance(e, TimeoutError) for e in _chain(exc))


def _mid_reply(exc: BaseException) -> bool:
    """Whether the connection was made and the reply then broke off (not a failed connect)."""
    broke = any(isinstance(e, httpx2.ReadError | httpx2.RemoteProtocolError) for e in _chain(exc))
    return broke and not _refused(exc)


def _broken(exc: BaseException) -> CutOff:
    """A cut-off reply, naming what broke it (the transport's error, not the SDK's wrapper)."""
    cause = exc
    while cause.__cause__ is not None:
        cause = cause.__cause__
    said = _short(" ".join(str(cause).split()), 120)  # on one line
    return CutOff(f"the connection broke ({type(cause).__name__}: {said})")


def _connect_failure(exc: BaseException) -> str:
    """Why a connection could not be made, in plain words (not the transport's own text)."""
    failures = [e for e in _chain(exc) if isinstance(e, OSError)]
    for failure in failures:  # TLS errors are OSErrors too, with errno values of their own
        if isinstance(failure, ssl.SSLCertVerificationError):
            return f"its TLS certificate was not accepted ({failure.verify_message})"
        if isinstance(failure, ssl.SSLError):
            return f"the TLS handshake failed ({failure.reason or 'no reason given'})"
    for failure in failures:
        if isinstance(failure, ConnectionRefusedError) or failure.errno == errno.ECONNREFUSED:
            return "connection refused"
        if isinstance(failure, socket.gaierror):
            return "the host name does not resolve"
    for failure in failures:
        if failure.errno is not None:
            return os_reason(failure)  # "network is unreachable"
    return "the connection could not be made"


def _unreachable(exc: Exception, model: str, url: str) -> ProviderError:
    reason = _connect_failure(exc) if _refused(exc) else str(exc)
    return ProviderError(
        f"cannot reach the model API: {reason} (is the server up? the URL comes from "
        "--base-url or OPENAI_BASE_URL)",
        retryable=True,
        provider="openai",
        model=model,
        url=url,
    )


async def _close(client: openai.AsyncOpenAI) -> None:
    await client.close()


def _short(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[:limit] + "…"
