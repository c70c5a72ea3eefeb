"""Fallback models: when one model fails for good, the next one named answers instead.

``Agent(model=["anthropic:claude-sonnet-4-5", "openai:gpt-4o"])`` asks the first model; when a
request to it fails in a way its retries do not fix (a bad key, an unknown model, a context too
long, an overload or 5xx answers once the retry policy's tries are spent, a server that cannot
be reached), the same request, history and all, goes to the next one, and so on down the list.
Any ``ProviderError`` falls back, a bad key included: the key of one provider says nothing about
the next one's, and the ``model_fallback`` event says which model failed, why, and which one is
asked now. The model that answered keeps answering for the rest of the run; the next run starts
from the first model again. Text the failed model had streamed is left behind: the next model's
reply streams from its start. When the last model fails too, the run ends with an error naming
every failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from neta.errors import ConfigError, ProviderError
from neta.plugins import NetaPluginManager
from neta.providers.base import ModelRequest, ModelResponse, Provider, TextSink
from neta.providers.registry import create_provider, resolve_model_name
from neta.providers.retry import retry_reason

_CONTEXT = re.compile(
    r"context.length|context window|maximum context|prompt is too long|input is too long"
    r"|too many (input )?tokens|tokens? > \d+",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ModelEntry:
    """One model of a fallback list.

    Attributes:
        label: the model as events name it (``openai:gpt-4o``).
        provider: the provider that asks it.
        model: the model's name as the provider is sent it (``gpt-4o``).
    """

    label: str
    provider: Provider
    model: str


@dataclass(frozen=True)
class FallbackNotice:
    """A model failed for good; the next one is asked (the runtime's ``model_fallback`` event).

    Attributes:
        failed: the model that failed.
        model: the model asked now.
        reason: why, in a few words (``authentication failed (401)``, ``overloaded``...).
        error: the failure itself.
    """

    failed: str
    model: str
    reason: str
    error: ProviderError


FallbackListener = Callable[[FallbackNotice], None]
"""Told each time a model is given up for the next one."""


class FallbackProvider:
    """Asks ``models`` in turn: each one only once those before it failed.

    Args:
        models: the models, first choice first (each provider wrapped as the run needs it:
            retried, metered).
        on_fallback: told before the next model is asked.
    """

    def __init__(
        self, models: Sequence[ModelEntry], on_fallback: FallbackListener | None = None
    ) -> None:
        if not models:
            raise ConfigError("a fallback list needs at least one model")
        self.models = tuple(models)
        self.on_fallback = on_fallback
        self.current = 0
        """The model asked first: the one that answered last."""

    @property
    def answering(self) -> ModelEntry:
        """The model asked next (the one that answered last, once one has)."""
        return self.models[self.current]

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """The answer of the first model that gives one, from the one that answered last on.

        Raises:
            ProviderError: every model left failed; the message names each failure.
        """
        failures: list[tuple[str, ProviderError]] = []
        while True:
            entry = self.models[self.current]
            try:
                return await entry.provider.complete(replace(request, model=entry.model), on_text)
            except ProviderError as exc:
                failures.append((entry.label, exc))
                if self.current + 1 == len(self.models):
                    raise _every_one_failed(failures) from exc
                self.current += 1
                if self.on_fallback is not None:
                    reason = fallback_reason(exc)
                    self.on_fallback(FallbackNotice(entry.label, self.answering.label, reason, exc))


def _every_one_failed(failures: Sequence[tuple[str, ProviderError]]) -> ProviderError:
    last = failures[-1][1]
    if len(failures) == 1:
        return last
    told = "; ".join(f"{label}: {error}" for label, error in failures)
    return ProviderError(
        f"every model failed: {told}",
        retryable=last.retryable,
        retry_after=last.retry_after,
        status=last.status,
    )


def fallback_reason(error: ProviderError) -> str:
    """Why a model was given up, in a few words a terminal can show."""
    status = error.status
    if status in (401, 403):
        return f"authentication failed ({status})"
    if status == 404:
        return "model not found (404)"
    if status in (400, 413) and _CONTEXT.search(str(error)):
        return "context too long"
    if status is not None and 400 <= status < 500 and status not in (408, 409, 429):
        return f"request refused ({status})"
    if status is None and error.retryable:
        return "no answer (connection failed or cut off)"
    return retry_reason(error)


def fallback_models(
    names: Sequence[str],
    *,
    provider: Provider | str | None,
    pm: NetaPluginManager,
    options: Mapping[str, object],
    timeout: float | None,
) -> tuple[ModelEntry, ...]:
    """The fallback models ``names`` name, each with its provider made.

    A name may carry its provider (``openai:gpt-4o``); one without asks the first model's
    provider (``provider``: its name, or the instance itself). ``options`` (``base_url``,
    ``api_key``...) go to the models of the first model's provider only: another provider
    reads its own environment (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``...). ``timeout``
    goes to every provider made.

    Raises:
        ConfigError: a name has no provider, or a provider cannot be made (its key missing).
    """
    named = provider if isinstance(provider, str) else None
    entries: list[ModelEntry] = []
    for name in names:
        which, model = resolve_model_name(None, name, pm)
        which = which or named
        if which is None:  # no name given: the first model's provider instance, if any
            if provider is None or isinstance(provider, str):
                raise ConfigError(
                    f"the fallback model {name!r} names no provider; write it provider:model"
                )
            entries.append(ModelEntry(model_label(None, model, provider), provider, model))
            continue
        given = dict(options) if which == named else {}
        if timeout is not None:
            given.setdefault("timeout", timeout)
        made = create_provider(which, pm, model=model, **given)
        entries.append(ModelEntry(model_label(which, model, made), made, model))
    return tuple(entries)


def model_label(provider: str | None, model: str, made: Provider | None = None) -> str:
    """``provider:model``, as events name a model (when ``model`` is empty, the provider's)."""
    if not model:
        chosen = getattr(made, "model", "")
        model = chosen if isinstance(chosen, str) else ""
    if provider:
        return f"{provider}:{model}" if model else provider
    return model or "the model"
