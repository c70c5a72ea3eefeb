"""Any OpenAI-compatible Chat Completions endpoint, through the official ``openai`` SDK.

Works with OpenAI and with local servers that speak the same API (Ollama, vLLM, llama.cpp
server). Base URL and key come from options or ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``. The SDK
retries 429 and 5xx responses and dropped connections with exponential backoff.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import openai

from neta.errors import ConfigError, ProviderError
from neta.messages import Usage
from neta.providers.base import ModelRequest, ModelResponse, TextSink
from neta.tools import ToolCall

_KEYLESS = "not-needed"  # local servers take any key; the SDK insists on one


class OpenAIProvider:
    """Chat Completions with streaming text and tool calls.

    Args:
        model: the model name; ``OPENAI_MODEL`` or ``gpt-4o-mini`` when empty.
        base_url: the API root (``.../v1``); ``OPENAI_BASE_URL`` when ``None``.
        api_key: the key; ``OPENAI_API_KEY`` when ``None``. Optional with a base URL.
        stream: stream the reply (text deltas as they come) or ask for it whole.
        max_retries: retries on 429, 5xx and connection errors, with backoff.
        timeout: seconds per request.
    """

    def __init__(
        self,
        model: str = "",
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        stream: bool = True,
        max_retries: int = 3,
        timeout: float = 600.0,
    ) -> None:
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if base_url is None and api_key is None:
            raise ConfigError(
                "the openai provider needs an API key or a base URL: set OPENAI_API_KEY "
                "(or --api-key), or OPENAI_BASE_URL (or --base-url) for a local server"
            )
        self.model = model or os.environ.get("OPENAI_MODEL") or "gpt-4o-mini"
        self.stream = stream
        self._client_options: dict[str, Any] = {
            "api_key": api_key or _KEYLESS,
            "base_url": base_url,
            "max_retries": max_retries,
            "timeout": timeout,
        }

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """Send one Chat Completions request (streamed or not) and collect the turn."""
        params: dict[str, Any] = {
            "model": request.model or self.model,
            "messages": [m.to_openai() for m in request.messages],
        }
        if request.tools:
            params["tools"] = request.tools
        try:
            # A client per request, closed with it: a provider may serve several event loops
            # (the CLI runs one per command), and a model turn dwarfs the set-up cost.
            async with openai.AsyncOpenAI(**self._client_options) as client:
                if self.stream:
                    return await self._streamed(client, params, on_text)
                return await self._whole(client, params, on_text)
        except openai.APIStatusError as exc:
            retryable = exc.status_code == 429 or exc.status_code >= 500
            body = exc.body if isinstance(exc.body, dict) else {}
            detail = str(body.get("message") or exc.message)
            raise ProviderError(
                f"model API answered {exc.status_code}: {_short(detail)}", retryable=retryable
            ) from exc
        except openai.APIConnectionError as exc:
            raise ProviderError(f"cannot reach the model API: {exc}", retryable=True) from exc

    async def _whole(
        self, client: openai.AsyncOpenAI, params: dict[str, Any], on_text: TextSink
    ) -> ModelResponse:
        completion = await client.chat.completions.create(**params)
        if not completion.choices:
            raise ProviderError("model API returned no choices")
        message = completion.choices[0].message
        text = message.content or ""
        if text:
            on_text(text)
        calls = [
            ToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments or "")
            for c in message.tool_calls or []
            if c.type == "function"
        ]
        usage = completion.usage
        return ModelResponse(
            text=text,
            tool_calls=calls,
            usage=Usage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens)
            if usage
            else None,
        )

    async def _streamed(
        self, client: openai.AsyncOpenAI, params: dict[str, Any], on_text: TextSink
    ) -> ModelResponse:
        stream = await client.chat.completions.create(
            **params, stream=True, stream_options={"include_usage": True}
        )
        text: list[str] = []
        calls: dict[int, _PartialCall] = {}
        usage: Usage | None = None
        async for chunk in stream:
            if chunk.usage is not None:
                usage = Usage(
                    input_tokens=chunk.usage.prompt_tokens,
                    output_tokens=chunk.usage.completion_tokens,
                )
            for choice in chunk.choices:
                delta = choice.delta
                if delta.content:
                    text.append(delta.content)
                    on_text(delta.content)
                for part in delta.tool_calls or []:
                    partial = calls.setdefault(part.index, _PartialCall())
                    partial.id = part.id or partial.id
                    if part.function is not None:
                        partial.name += part.function.name or ""
                        partial.arguments.append(part.function.arguments or "")
        return ModelResponse(
            text="".join(text),
            tool_calls=[calls[i].finish(i) for i in sorted(calls)],
            usage=usage,
        )


@dataclass
class _PartialCall:
    """A tool call assembled from streamed fragments."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def finish(self, index: int) -> ToolCall:
        return ToolCall(
            id=self.id or f"call_{index}", name=self.name, arguments="".join(self.arguments)
        )


def _short(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[:limit] + "…"
